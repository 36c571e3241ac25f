package report

import (
	"slices"
	"testing"
)

// The main job's list and report.md's sections come from the registry in
// the order the report has always had.
func TestMainJobOrder(t *testing.T) {
	want := []string{"leviathan-table1", "leviathan-tokens", "leviathan-walltime", "block-vs-token",
		"lossy-frontier", "lenience-table", "multidraft", "drafters", "dynamic-gamma", "smc-steering", "audit"}
	if !slices.Equal(MainExperiments, want) {
		t.Errorf("MainExperiments = %v, want %v", MainExperiments, want)
	}
	wantOrder := []string{"leviathan-table1", "leviathan-tokens", "leviathan-walltime", "block-vs-token", "lossy-frontier",
		"lenience-table", "multidraft", ScenarioExperiment, ReplayExperiment, "drafters", "dynamic-gamma", "smc-steering", "audit"}
	if !slices.Equal(reportOrder, wantOrder) {
		t.Errorf("reportOrder = %v, want %v", reportOrder, wantOrder)
	}
	for _, n := range reportOrder {
		if sectionTitle[n] == "" {
			t.Errorf("section %s has no title", n)
		}
	}
}
