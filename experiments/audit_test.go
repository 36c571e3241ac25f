package experiments

import (
	"context"
	"testing"

	"github.com/specsim/specsim/internal/longtest"
)

// TestAudit runs the main job (fixed seed) and checks every verdict is the
// expected one: lossless rules and strict points preserved, mutants
// violated, lossy rules lossy. The long suite (SPECSIM_LONG=1) runs it at
// its default size; the default suite at 5% of the trials. The check holds
// at any size: the exact and edge verdicts do not depend on the trials
// (they flag every mutant and lossy rule), and the statistical checks keep
// the family-wise false-alarm level of check.DefaultLevel at any trial
// count, so a lossless rule is flagged with probability at most 0.01 (here,
// with the fixed seed, never).
func TestAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("the audit takes about a minute; skipped with -short")
	}
	e, err := Lookup("audit")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := RunAll(context.Background(), e, Config{Seed: 1, Scale: longtest.Pick(0.05, 1)})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range rows {
		kinds[r.String("kind")]++
		if ok, _ := r.Get("ok"); ok != true {
			t.Errorf("%s %s (%s): verdict %s (exact %s, statistical %s, edge %s), expected %s", r.String("algorithm"), r.String("params"),
				r.String("kind"), r.String("verdict"), r.String("exact_verdict"), r.String("statistical_verdict"), r.String("edge_verdict"), r.String("expected"))
		}
	}
	for _, k := range []string{"rule", "mutant", "lossy", "strict", "tree-rule", "tree-mutant"} {
		if kinds[k] == 0 {
			t.Errorf("the audit has no %s rows", k)
		}
	}
}
