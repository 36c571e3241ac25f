package algos

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestMultipathFast checks the sampler's quantities (multipath_fast.go)
// against the law's skewed row from gbvSkew, on 400 random depths (V from
// 2 to 3,000 and some of 20,000, zeros planted in p and q, tokens planted
// with x's exact key, now and then an x with q(x) = 0, every other pair in
// float32 rows, k = 2…8, the prefix β random with ρ = 1 − β, w in (0, 1]):
//   - s(x) and β, ρ after x agree with gbvSkew's to 1e-12 relative;
//   - Z from the buckets agrees with Σ (w·p − s)+ over the law's row to
//     1e-12;
//   - at 40 uniforms the drawn token is the inverse-CDF token of the law's
//     residual taken in the walk's order (q = 0 tokens by index, then by
//     key and token), except where the target lies within 1e-9·Z of a
//     cumulative boundary (rounding).
func TestMultipathFast(t *testing.T) {
	rng := sim.NewRand(19, sim.StreamID("multipath-fast"))
	sc := new(gbvScratch)
	for trial := range 400 {
		v := 2 + rng.IntN(3000)
		if trial%20 == 0 {
			v = 20000
		}
		p := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2+1))
		q := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2))
		x := rng.IntN(v)
		for q[x] == 0 && trial%25 != 0 { // every 25th: x may have q = 0 (another drafter's child)
			x = rng.IntN(v)
		}
		for range rng.IntN(4) { // exact ties with x's key
			y := rng.IntN(v)
			p[y], q[y] = p[x], q[x]
		}
		sim.Normalize(p)
		sim.Normalize(q)
		pr, qr := sim.F64(p), sim.F64(q)
		if trial%2 == 1 {
			pr, qr = sim.F32(toF32(p)), sim.F32(toF32(q))
		}
		k, beta := 2+rng.IntN(7), 0.9*rng.Float64()
		if trial%5 == 0 {
			beta = 0
		}
		w := 1 - rng.Float64()
		checkMultipathFast(t, trial, sc, pr, qr, x, k, beta, w, rng.Float64)
	}
}

// checkMultipathFast compares one depth's sampler quantities with the law's.
func checkMultipathFast(t *testing.T, trial int, sc *gbvScratch, pr, qr sim.Row, x, k int, beta, w float64, unif func() float64) {
	t.Helper()
	v := pr.Len()
	s := make([]float64, v)
	nb, nr := gbvSkew(s, pr, qr, k, beta, 1-beta, x)
	lv := &gbvLevel{p: pr, q: qr, x: x}
	fb, fr := lv.setSkew(beta, 1-beta, k)
	for _, c := range [][3]float64{{lv.sx, s[x]}, {fb, nb}, {fr, nr}} {
		if math.Abs(c[0]-c[1]) > 1e-12*math.Abs(c[1]) {
			t.Fatalf("trial %d V=%d k=%d: s(x), β, ρ = %.17g %.17g %.17g; gbvSkew %.17g %.17g %.17g", trial, v, k, lv.sx, fb, fr, s[x], nb, nr)
		}
	}
	// the law's residual in the walk's order
	order := []int{}
	for y := range v {
		if !(qr.At(y) > 0) {
			order = append(order, y)
		}
	}
	ms := new(mscratch)
	for _, it := range gbvSorted(ms, pr, qr) {
		order = append(order, int(it.c))
	}
	cum := make([]float64, len(order))
	z := 0.0
	for i, y := range order {
		z += max(0, w*pr.At(y)-s[y])
		cum[i] = z
	}
	sc.build(lv)
	fz := sc.residual(lv, w)
	if math.Abs(fz-z) > 1e-12 {
		t.Fatalf("trial %d V=%d k=%d w=%g: Z = %.17g from the buckets, %.17g from the law's row", trial, v, k, w, fz, z)
	}
	if !(fz > 0) {
		return
	}
	for range 40 {
		target := unif() * fz
		got := sc.sample(lv, w, target)
		i := 0
		for i < len(cum)-1 && !(cum[i] > target) {
			i++
		}
		if got != order[i] && math.Abs(cum[i]-target) > 1e-9*fz && (i == 0 || math.Abs(cum[i-1]-target) > 1e-9*fz) {
			t.Fatalf("trial %d V=%d k=%d: target %.17g of Z %.17g draws %d, the law's row %d", trial, v, k, target, fz, got, order[i])
		}
	}
}

// TestFastSamplersMatchLawWideV: the samplers that compute less than
// their laws (K-SEQ's bracket and kernel paths, SpecHub's completeFast,
// multipath-block's passes and buckets) against their TreeLaw at the
// widest Markov pair (V = 64, where TestTreeRulesSamplerMatchesLaw has 4):
// one tree each, 200,000 outcomes in a pooled χ² test at level 1e-6 (per
// assertion false-failure rate 1e-6; fixed seeds, so the test is
// deterministic at this commit). TestMultipathFast and TestSpecHubFast
// check the parts at V in the thousands.
func TestFastSamplersMatchLawWideV(t *testing.T) {
	const n, level = 200000, 1e-6
	pair := treePair(t, 23, 64, 0.5)
	for _, name := range []string{"kseq", "spechub", "multipath-block"} {
		e, _ := LookupTree(name)
		res := treeFit(t, sim.NewRand(29, sim.StreamID("multipath-fast/law", 0)), e, pair, 4, n)
		if res.PValue < level {
			t.Errorf("%s: sampler disagrees with the law: X² = %.1f, df %d, p = %.3g", name, res.Stat, res.DF, res.PValue)
		}
		t.Logf("%s: X² = %.1f, df %d, p = %.3g", name, res.Stat, res.DF, res.PValue)
	}
}
