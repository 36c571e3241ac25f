package algos

import (
	"testing"

	"github.com/specsim/specsim/sim"
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
		for seed := uint64(1); seed <= 3; seed++ {
			pair := treePair(t, 100+seed, 5, 0.3)
			rng := sim.NewRand(seed, sim.StreamID("multi-fast-test", seed))
			res := treeFit(t, rng, e, pair, 4, n)
			if res.PValue < level {
				t.Errorf("%s seed %d: sampler disagrees with the law: X² = %.1f, df %d, p = %.3g", name, seed, res.Stat, res.DF, res.PValue)
			}
		}
	}
}
