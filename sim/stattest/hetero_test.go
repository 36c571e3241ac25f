package stattest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHeteroPearson: with every observation drawn from the same law the
// quadratic form dᵀΣ⁺d is exactly Pearson's statistic (Σ = N(diag p - ppᵀ)
// and its pseudo-inverse on the sum-zero subspace is diag(1/p)/N), with
// K-1 degrees of freedom; the spread of the uniform law on 4 cells is 1.
func TestHeteroPearson(t *testing.T) {
	p := []float64{0.25, 0.25, 0.25, 0.25}
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHetero(4)
	obs := make([]int64, 4)
	for range 1000 {
		c := rng.IntN(4)
		obs[c]++
		h.Add(p, c)
	}
	r := h.Test(0)
	want, err := ChiSquare(obs, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Stat-want.Stat) > 1e-9*want.Stat || r.DF != want.DF || math.Abs(r.PValue-want.PValue) > 1e-9 {
		t.Errorf("hetero X2 %v df %d p %v, Pearson %v df %d p %v", r.Stat, r.DF, r.PValue, want.Stat, want.DF, want.PValue)
	}
	if math.Abs(r.Spread-1) > 1e-12 {
		t.Errorf("spread %v, want 1", r.Spread)
	}
}

// TestHeteroDeterministic: observations that are certain given their law
// carry no variance: the statistic is 0, and an observation of probability
// zero makes it +Inf.
func TestHeteroDeterministic(t *testing.T) {
	h := NewHetero(3)
	for i := range 300 {
		law := []float64{0, 0, 0}
		law[i%3] = 1
		h.Add(law, i%3)
	}
	r := h.Test(0)
	if r.Stat != 0 || r.Spread != 0 || !r.Deterministic {
		t.Errorf("deterministic: stat %v spread %v deterministic %v, want 0, 0, true", r.Stat, r.Spread, r.Deterministic)
	}
	if got, want := r.MinDetectableTV(0.01, 0.9), math.Log(10)/300; math.Abs(got-want) > 1e-15 {
		t.Errorf("deterministic min TV %v, want ln(10)/300 = %v", got, want)
	}
	h.Add([]float64{1, 0, 0}, 1)
	if r := h.Test(0); !math.IsInf(r.Stat, 1) || r.PValue != 0 || r.Impossible != 1 {
		t.Errorf("impossible observation: stat %v p %v impossible %d", r.Stat, r.PValue, r.Impossible)
	}
}

// AddBlocks is Add with the block-constant law expanded: on 2,000
// observations of random laws over blocks of widths 3, 1, 4, 1 (one block
// often of mass 0, observations drawn from the law and, one time in
// fifty, from a skewed one), split over two accumulators and merged, the
// statistic, degrees of freedom, p-value, spread and residuals agree with
// Add's to 1e-9.
func TestHeteroAddBlocks(t *testing.T) {
	width := []int{3, 1, 4, 1}
	k := 9
	rng := rand.New(rand.NewPCG(5, 6))
	full, blk, blk2 := NewHetero(k), NewHetero(k), NewHetero(k)
	mass := make([]float64, len(width))
	law := make([]float64, k)
	for s := range 2000 {
		tot := 0.0
		for b := range mass {
			mass[b] = rng.Float64()
			if b == 3 && rng.IntN(2) == 0 {
				mass[b] = 0
			}
			tot += mass[b]
		}
		c := 0
		for b, w := range width {
			mass[b] /= tot
			for range w {
				law[c] = mass[b] / float64(w)
				c++
			}
		}
		obs := 0
		u := rng.Float64()
		if s%50 == 0 {
			u *= 0.3 // skewed towards the first cells
		}
		for acc := law[0]; acc < u && obs < k-1; acc += law[obs] {
			obs++
		}
		full.Add(law, obs)
		if s%2 == 0 {
			blk.AddBlocks(width, mass, obs)
		} else {
			blk2.AddBlocks(width, mass, obs)
		}
	}
	blk.Merge(blk2)
	a, b := full.Test(5), blk.Test(5)
	close := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(x)) }
	if a.DF != b.DF || a.N != b.N || a.Cells != b.Cells || a.Impossible != b.Impossible || a.Deterministic != b.Deterministic ||
		!close(a.Stat, b.Stat) || !close(a.PValue, b.PValue) || !close(a.Spread, b.Spread) {
		t.Fatalf("Add: %+v\nAddBlocks: %+v", a, b)
	}
	ra, rb := full.TopResiduals(4), blk.TopResiduals(4)
	for i := range ra {
		if ra[i].Cell != rb[i].Cell || !close(ra[i].Z, rb[i].Z) {
			t.Errorf("residual %d: Add %+v, AddBlocks %+v", i, ra[i], rb[i])
		}
	}
	if a.Impossible == 0 && a.Stat == 0 {
		t.Errorf("degenerate test: %+v", a)
	}
}
