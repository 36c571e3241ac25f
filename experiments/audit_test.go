package experiments

import (
	"context"
	"testing"
)

// TestAudit runs the main job at its default size (fixed seed) and checks
// every verdict is the expected one: lossless rules and strict points
// preserved, mutants violated, lossy rules lossy.
func TestAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("the audit takes about a minute; skipped with -short")
	}
	e, err := Lookup("audit")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := RunAll(context.Background(), e, Config{Seed: 1})
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
