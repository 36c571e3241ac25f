package resolve_test

import (
	"testing"

	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// TestSpecHubConform: spechub's steps conform to its own exact law given
// the drafts (not_detected), while its mutant spechub-second-vs-p and
// specinfer run on the same hub pairs (rejection sampling of the first,
// then the second draft) violate it: 20,000 steps of k = 2, depth 3 on a
// seeded Markov pair at family-wise level 0.01 (the check's default),
// fixed seeds.
func TestSpecHubConform(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ algo, want string }{
		{"spechub", check.NotDetected}, {"spechub-second-vs-p", check.Violated}, {"specinfer", check.Violated},
	} {
		rep := run(t, resolve.Request{Algo: c.algo, Conform: "spechub", K: 2, Draft: "hub", Source: "markov:V=4,order=1,seed=7,quality=0.2",
			Config: check.Config{Gamma: 3, Trials: 20000, Seed: 1, Workers: 1}})
		if rep.Verdict != c.want {
			t.Errorf("%s --conform spechub: verdict %s (p = %.3g), want %s", c.algo, rep.Verdict, rep.PValue, c.want)
		}
	}
}
