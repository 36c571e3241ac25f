package algos

import (
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
)

// TestFastTreeSamplers tests the scalar-form samplers of SpecInfer and
// RRS without replacement (multi_fast.go) against the exact laws of the
// row-writing recursions, on trees with four draws at the root (so that
// several rejections in a row, repeated draws and rejected tokens' frozen
// weights all occur): 200,000 outcomes per tree in a pooled χ² test at
// level 1e-6 (fixed seeds: deterministic at this commit).
func TestFastTreeSamplers(t *testing.T) {
	const n, level = 200000, 1e-6
	for _, name := range []string{"specinfer", "rrs-wor"} {
		e, _ := LookupTree(name)
		a, _ := e.Build(nil)
		for seed := uint64(1); seed <= 3; seed++ {
			pair := treePair(t, 100+seed, 5, 0.3)
			cfg := sim.DrafterConfig{Kind: e.Draft, Q: pair.Q, K: 4, Depth: 2}
			if e.Draft != sim.DraftIID {
				cfg.Branch = []int{4, 2}
			}
			d, err := sim.NewDrafter(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rng := sim.NewRand(seed, sim.StreamID("multi-fast-test", seed))
			var tree sim.Tree
			sim.DraftTree(rng, d, pair.P, nil, &tree)
			var law sim.TreeLaw
			a.(sim.TreeLawer).TreeLaw(&tree, &law)
			obs := make([]int64, len(law.P))
			for range n {
				o := a.AcceptTree(rng, &tree)
				obs[o.Node*(tree.V+1)+o.Next+1]++
			}
			res, err := stattest.ChiSquare(obs, law.P, 5)
			if err != nil {
				t.Fatal(err)
			}
			if res.PValue < level {
				t.Errorf("%s seed %d: sampler disagrees with the law: X² = %.1f, df %d, p = %.3g", name, seed, res.Stat, res.DF, res.PValue)
			}
		}
	}
}
