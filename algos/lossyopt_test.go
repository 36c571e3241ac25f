package algos

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestMentoredIsOptimal is the independent optimality check (issue 4,
// item 3): on V = 2..6, no feasible (r, s) found by the numerical search
// beats mentored decoding's acceptance by more than 1e-4 for a grid of D,
// and the search gets close to it (so the comparison is not vacuous).
func TestMentoredIsOptimal(t *testing.T) {
	rng := sim.NewRand(12, sim.StreamID("lossy/optimality"))
	worstAbove, worstBelow := math.Inf(-1), 0.0
	n := 0
	for trial := range 10 {
		v := 2 + trial%5
		p, q := randPair(rng, v, 0)
		kl0 := sim.KL(p, q)
		for _, f := range []float64{0.05, 0.2, 0.5, 0.8} {
			d := f * kl0
			m, err := SolveMentored(p, q, d)
			if err != nil {
				t.Fatal(err)
			}
			found, err := SearchAcceptance(rng, p, q, d, 4)
			if err != nil {
				t.Fatal(err)
			}
			n++
			gap := found.Acceptance - m.Acceptance
			worstAbove = math.Max(worstAbove, gap)
			worstBelow = math.Max(worstBelow, -gap)
			if gap > 1e-4 {
				t.Fatalf("V=%d D=%g: search found acceptance %.8f with KL %.3g, mentored %.8f", v, d, found.Acceptance, found.KL, m.Acceptance)
			}
			if gap < -1e-5 {
				t.Fatalf("V=%d D=%g: search reached only %.6f against mentored %.6f; the check is too weak", v, d, found.Acceptance, m.Acceptance)
			}
		}
	}
	t.Logf("%d (pair, D) cases: max (search - mentored) = %.3g, max (mentored - search) = %.3g", n, worstAbove, worstBelow)
}

// TestSearchBeatsSuboptimalRule is the negative control: the same search
// finds points that beat lenience-residual-p's acceptance at its own KL,
// so the optimality check can fail.
func TestSearchBeatsSuboptimalRule(t *testing.T) {
	rng := sim.NewRand(13, sim.StreamID("lossy/optimality-control"))
	p, q := []float64{0.5, 0.3, 0.15, 0.05}, []float64{0.1, 0.2, 0.3, 0.4}
	pi, acc, err := PositionLaw(Lenience{L: 0.5, ResidualP: true}, p, q)
	if err != nil {
		t.Fatal(err)
	}
	found, err := SearchAcceptance(rng, p, q, sim.KL(p, pi), 4)
	if err != nil {
		t.Fatal(err)
	}
	if !(found.Acceptance > acc+1e-3) {
		t.Fatalf("search %.6f did not beat lenience-residual-p %.6f at KL %.4g", found.Acceptance, acc, sim.KL(p, pi))
	}
}
