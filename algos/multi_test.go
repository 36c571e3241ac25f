package algos

import (
	"fmt"
	"testing"

	"github.com/specsim/specsim/sim"
)

// treePair returns a seeded random Markov pair (order 1) over v tokens.
func treePair(t *testing.T, seed uint64, v int, quality float64) sim.Pair {
	t.Helper()
	pr, err := sim.NewMarkovPair(sim.NewRand(seed, sim.StreamID("multi-test/pair", uint64(v))),
		sim.MarkovConfig{V: v, Order: 1, A: 0.7, Quality: quality})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func drafterFor(t *testing.T, kind sim.DraftKind, q sim.Model, k, depth int) sim.Drafter {
	t.Helper()
	d, err := sim.NewDrafter(sim.DrafterConfig{Kind: kind, Q: q, K: k, Depth: depth})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTreeRulesExact is the first criterion: every lossless tree
// rule, run with the draft kind it is registered for, reproduces the
// target's law of the first depth+1 tokens to 1e-12 on seeded random model
// pairs with V ≤ 5, k ≤ 3, depth ≤ 2; the naive scheme and the top-k
// ratio mutant are flagged. Also: every rule with k ≥ 2 draws, on the same
// drafts, never beats the optimal bound at the root.
func TestTreeRulesExact(t *testing.T) {
	cases := []struct {
		seed     uint64
		v, k, d  int
		quality  float64
		branched bool
	}{
		{1, 3, 2, 1, 0.3, false}, {2, 4, 3, 1, 0.5, false}, {3, 3, 2, 2, 0.6, false},
		{4, 4, 3, 2, 0.2, false}, {5, 5, 2, 2, 0.8, false}, {6, 5, 3, 1, 0.0, false},
		{7, 3, 3, 2, 0.5, true},
	}
	for _, c := range cases {
		pair := treePair(t, c.seed, c.v, c.quality)
		for _, e := range AllTree() {
			name := fmt.Sprintf("%s/seed=%d/V=%d/k=%d/depth=%d", e.Name, c.seed, c.v, c.k, c.d)
			t.Run(name, func(t *testing.T) {
				a, err := e.Build(nil)
				if err != nil {
					t.Fatal(err)
				}
				cfg := sim.DrafterConfig{Kind: e.Draft, Q: pair.Q, K: c.k, Depth: c.d}
				if c.branched && e.Draft != sim.DraftIID {
					cfg.Branch = []int{2, 2}
				}
				d, err := sim.NewDrafter(cfg)
				if err != nil {
					t.Fatal(err)
				}
				res, err := sim.ExactTree(pair.P, d, a.(sim.TreeLawer), sim.TreeExactConfig{})
				if err != nil {
					t.Fatal(err)
				}
				wantLossless := !e.Mutant && !e.Lossy
				if e.Name == "shared-uniform-batch" {
					wantLossless = true // marginally exact; flagged by TestSharedUniformBatchCorrelation
				}
				if res.Lossless != wantLossless {
					t.Fatalf("lossless = %v (max_abs_error %.3g), want %v", res.Lossless, res.MaxAbsError, wantLossless)
				}
				if !wantLossless && res.MaxAbsError < 1e-6 {
					t.Fatalf("bias %.3g too small to be a real flag", res.MaxAbsError)
				}
			})
		}
	}
}
