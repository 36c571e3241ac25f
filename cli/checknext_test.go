package cli

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// A check that detected nothing says what would show more: the trials that
// halve the finest test's TV with their time at the run's rate, and the
// conformance test, named from the best lossless fit where there are fits
// (external implementations) and as --conform R for the named rule R the
// rule is meant to implement where there are none. A check that detected
// a violation names the rule the outcomes look most like.
func TestNextSteps(t *testing.T) {
	r := resolve.Report{Algorithm: "mutant-q-mismatch", Result: check.Result{Verdict: check.NotDetected, Mode: "lossless", Trials: 1000, MoreTrials: 4000, MinDetectableTV: 0.02}}
	got := strings.Join(nextSteps(r, 2), "\n")
	for _, want := range []string{"--trials 4000 would detect about half the TV (0.01", "about 8 s", "--conform token"} {
		if !strings.Contains(got, want) {
			t.Errorf("no fits: next steps lack %q:\n%s", want, got)
		}
	}
	r.Fits = []check.Fit{{Name: "mutant-q-mismatch", Lossless: false}, {Name: "token", Lossless: true, MeanLogLik: -1, Steps: 10}}
	if got := strings.Join(nextSteps(r, 2), "\n"); !strings.Contains(got, "--conform token tests the outcomes given the drafts against token's exact law") {
		t.Errorf("fits: next steps do not name token's conformance test:\n%s", got)
	}
	r.Verdict = check.Violated
	if got := strings.Join(nextSteps(r, 2), "\n"); !strings.Contains(got, "look most like the lossy rule or planted bug mutant-q-mismatch") {
		t.Errorf("violated: next steps do not name the closest rule:\n%s", got)
	}
	r.Algorithm, r.Fits, r.Verdict = "token", nil, check.NotDetected
	if got := strings.Join(nextSteps(r, 2), "\n"); strings.Contains(got, "--conform") {
		t.Errorf("token: next steps suggest conforming token to itself:\n%s", got)
	}
}
