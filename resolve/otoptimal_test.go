package resolve_test

import (
	"testing"

	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// TestOTOptimalVerdicts: ot-optimal is preserved with its i.i.d. drafts
// and conforms to its own law; its mutant ot-selected-as-q is violated by
// the check and by --conform ot-optimal, and so is specinfer (lossless but
// another law given the drafts), all on the tree check's pair of
// TestTreeVerdicts (20,000 trials, fixed seeds, family-wise level 0.01).
func TestOTOptimalVerdicts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, conform, want string }{
		{"ot-optimal", "", check.NotDetected}, {"ot-selected-as-q", "", check.Violated},
		{"ot-optimal", "ot-optimal", check.NotDetected}, {"ot-selected-as-q", "ot-optimal", check.Violated},
		{"specinfer", "ot-optimal", check.Violated},
	} {
		rep := run(t, resolve.Request{Algo: c.name, Conform: c.conform, Source: "markov:V=4,order=2,seed=3", K: 3,
			Config: check.Config{Gamma: 3, Trials: 20000, Seed: 4, Workers: 1}})
		wantVerdict(t, rep.Result, nil, c.want, c.name+" conform "+c.conform)
	}
}
