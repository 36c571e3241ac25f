package plots

import (
	"math"
	"testing"

	"github.com/specsim/specsim/table"
)

// The audit figure has one line per row, marks a row whose verdict is not
// the expected one, notes a row without an exact law, and reads.
func TestAuditFigure(t *testing.T) {
	row := func(name, verdict string, ok bool, tv, det float64, edge string) table.Row {
		return table.Row{{K: "algorithm", V: name}, {K: "params", V: ""}, {K: "kind", V: "rule"}, {K: "verdict", V: verdict},
			{K: "ok", V: ok}, {K: "exact_tv", V: tv}, {K: "min_detectable_tv", V: det}, {K: "edge_verdict", V: edge}}
	}
	rows := []table.Row{
		row("token", "not_detected", true, 1e-17, 0.02, "passed"),
		row("mutant-a", "violated", true, 0.1, 0.02, "passed"),
		row("mutant-b", "violated", true, math.NaN(), 0.02, "violated"),
		row("lossy-c", "lossy", true, 0.2, 0.02, "n/a"),
		row("broken", "not_detected", false, 1e-17, 0.02, "passed"),
	}
	f, err := Audit(rows)
	if err != nil {
		t.Fatal(err)
	}
	// five rows: three in the left panel, two in the right
	if len(f.Panels) != 2 || f.GridCols != 2 {
		t.Fatalf("%d panels in %d columns, want 2 side by side", len(f.Panels), f.GridCols)
	}
	for _, p := range f.Problems() {
		t.Error(p)
	}
	names := map[string]int{}
	for i, p := range f.Panels {
		for _, tk := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
			if tk.Label != "" {
				names[tk.Label] = i + 1
			}
		}
	}
	// the row without an exact law says in its name where its verdict
	// came from (no marker; a note over the bar hid the bar)
	const noLaw = "mutant-b (no law; edge cases: violated)"
	if names["token"] != 1 || names[noLaw] != 1 || names["lossy-c"] != 2 || names["! broken"] != 2 {
		t.Errorf("rows by panel %v, want token, mutant-a, mutant-b left and lossy-c, ! broken right", names)
	}
	for _, want := range []string{"token", "! broken", noLaw} {
		if names[want] == 0 {
			t.Errorf("no line named %q in %v", want, names)
		}
	}
	if _, err := f.Render("png"); err != nil {
		t.Fatal(err)
	}
	if _, err := Audit(nil); err == nil {
		t.Error("no rows: no error")
	}
}
