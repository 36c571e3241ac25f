package resolve_test

import (
	"testing"

	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// TestMultipathBlockVerdicts: multipath-block is preserved with its
// i.i.d. chains and conforms to its own exact law given the drafts; its
// mutant multipath-block-plainq is violated by the check and by
// --conform multipath-block, and so is specinfer (lossless, but another
// law given the drafts): 20,000 steps of k = 3 chains of depth 3 on a
// seeded Markov pair, family-wise level 0.01 (the check's default),
// fixed seeds.
func TestMultipathBlockVerdicts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, conform, want string }{
		{"multipath-block", "", check.NotDetected}, {"multipath-block-plainq", "", check.Violated},
		{"multipath-block", "multipath-block", check.NotDetected},
		{"multipath-block-plainq", "multipath-block", check.Violated},
		{"specinfer", "multipath-block", check.Violated},
	} {
		rep := run(t, resolve.Request{Algo: c.name, Conform: c.conform, Source: "markov:V=4,order=1,seed=7", K: 3,
			Config: check.Config{Gamma: 3, Trials: 20000, Seed: 1, Workers: 1}})
		wantVerdict(t, rep.Result, nil, c.want, c.name+" conform "+c.conform)
	}
}
