package report

import (
	"slices"
	"testing"

	"github.com/specsim/specsim/experiments"
)

// The main job's list (and report.md's sections) come from the registry
// in the order the report has always had, each with its title.
func TestMainJobOrder(t *testing.T) {
	want := []string{"leviathan-table1", "leviathan-tokens", "leviathan-walltime", "block-vs-token", "seeds", "lossy-frontier",
		"lenience-table", "multidraft", experiments.ScenariosName, experiments.ReplayName, "drafters", "dynamic-gamma", "smc-steering", "audit", "throughput"}
	if !slices.Equal(MainExperiments, want) {
		t.Errorf("MainExperiments = %v, want %v", MainExperiments, want)
	}
	for _, e := range experiments.MainJob() {
		if e.Section == "" {
			t.Errorf("experiment %s has no section title", e.Name)
		}
	}
}
