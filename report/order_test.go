package report

import (
	"testing"

	"github.com/specsim/specsim/experiments"
)

// The main job's list (and report.md's sections) is the registry's main
// experiments in the order of their Main places: every place is taken
// once (so no two experiments tie and fall back on their names), every
// experiment has a section title, and MainExperiments lists exactly them.
// The order of today's sections is held by the reproduce checksums.
func TestMainJobOrder(t *testing.T) {
	main := experiments.MainJob()
	if len(main) == 0 || len(MainExperiments) != len(main) {
		t.Fatalf("MainExperiments has %d names, the registry %d main experiments", len(MainExperiments), len(main))
	}
	places := map[int]string{}
	for i, e := range main {
		if MainExperiments[i] != e.Name {
			t.Errorf("MainExperiments[%d] = %s, want %s", i, MainExperiments[i], e.Name)
		}
		if e.Section == "" {
			t.Errorf("experiment %s has no section title", e.Name)
		}
		if other, taken := places[e.Main]; taken {
			t.Errorf("experiments %s and %s share the main-job place %d", other, e.Name, e.Main)
		}
		places[e.Main] = e.Name
		if i > 0 && main[i-1].Main >= e.Main {
			t.Errorf("%s (place %d) after %s (place %d)", e.Name, e.Main, main[i-1].Name, main[i-1].Main)
		}
	}
}
