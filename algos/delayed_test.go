package algos

import (
	"fmt"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// TestDelayedLossless: every lossless rule registered for i.i.d. drafts
// stays lossless on delayed trees (arXiv 2602.16994, §5: each node's draws
// are i.i.d. given its path). The exact engine reproduces the target's law
// of the first depth+1 tokens to sim.ExactTol on seeded random pairs with
// V ≤ 4, k ≤ 3 and every delay from 1 to the depth.
func TestDelayedLossless(t *testing.T) {
	cases := []struct {
		seed    uint64
		v, k, d int
		quality float64
	}{{11, 3, 2, 2, 0.3}, {12, 4, 3, 2, 0.6}, {13, 3, 2, 3, 0.1}}
	for _, c := range cases {
		pair := treePair(t, c.seed, c.v, c.quality)
		for _, e := range AllTree() {
			if e.Draft != sim.DraftIID || e.Lossy || e.Mutant {
				continue
			}
			for delay := 1; delay <= c.d; delay++ {
				t.Run(fmt.Sprintf("%s/seed=%d/delay=%d", e.Name, c.seed, delay), func(t *testing.T) {
					a, err := e.Build(nil)
					if err != nil {
						t.Fatal(err)
					}
					lw, ok := a.(sim.TreeLawer)
					if !ok {
						t.Skip("no exact law")
					}
					d, err := draft.NewTree(draft.DraftDelayed, draft.Config{Q: pair.Q, K: c.k, Depth: c.d, Delay: delay})
					if err != nil {
						t.Fatal(err)
					}
					res, err := sim.ExactTree(pair.P, d, lw, sim.TreeExactConfig{})
					if err != nil {
						t.Fatal(err)
					}
					if !res.Lossless || res.TV > 1e-12 {
						t.Errorf("lossless = %v, TV = %.3g", res.Lossless, res.TV)
					}
				})
			}
		}
	}
}
