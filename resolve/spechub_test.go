package resolve_test

import (
	"testing"

	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// TestSpecHubVerdicts: spechub is preserved on its hub pairs and conforms
// to its own exact law given the drafts (not_detected); its mutant
// spechub-second-vs-p is violated by the check and by --conform spechub,
// and so is specinfer run on the same hub pairs (lossless there, but
// another law given the drafts: the first, then the second draft by
// rejection sampling). 20,000 steps of k = 2, depth 3 on a seeded Markov
// pair at family-wise level 0.01 (the check's default), fixed seeds.
func TestSpecHubVerdicts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, conform, want string }{
		{"spechub", "", check.NotDetected}, {"spechub-second-vs-p", "", check.Violated},
		{"spechub", "spechub", check.NotDetected}, {"spechub-second-vs-p", "spechub", check.Violated},
		{"specinfer", "spechub", check.Violated},
	} {
		rep := run(t, resolve.Request{Algo: c.name, Conform: c.conform, K: 2, Draft: "hub", Source: "markov:V=4,order=1,seed=7,quality=0.2",
			Config: check.Config{Gamma: 3, Trials: 20000, Seed: 1, Workers: 1}})
		wantVerdict(t, rep.Result, nil, c.want, c.name+" conform "+c.conform)
	}
}
