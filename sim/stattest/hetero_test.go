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
