package resolve_test

import (
	"testing"

	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// TestTraversalConform: traversal's steps conform to its own exact law
// given the drafts (not_detected), while its mutant traversal-keepq and
// rrs-wor (the token-level rule for the same without-replacement trees)
// violate it: 20,000 steps of k = 3, depth 3 on a seeded Markov pair at
// family-wise level 0.01 (the check's default), fixed seeds.
func TestTraversalConform(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ algo, want string }{
		{"traversal", check.NotDetected}, {"traversal-keepq", check.Violated}, {"rrs-wor", check.Violated},
	} {
		rep := run(t, resolve.Request{Algo: c.algo, Conform: "traversal", K: 3, Source: "markov:V=4,order=1,seed=7",
			Config: check.Config{Gamma: 3, Trials: 20000, Seed: 1, Workers: 1}})
		if rep.Verdict != c.want {
			t.Errorf("%s --conform traversal: verdict %s (p = %.3g), want %s", c.algo, rep.Verdict, rep.PValue, c.want)
		}
	}
}
