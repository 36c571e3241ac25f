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
	if len(f.Panels) != 1 {
		t.Fatalf("%d panels, want 1", len(f.Panels))
	}
	for _, p := range f.Problems() {
		t.Error(p)
	}
	ticks := f.Panels[0].Y.Tick.Marker.Ticks(f.Panels[0].Y.Min, f.Panels[0].Y.Max)
	names := map[string]bool{}
	for _, tk := range ticks {
		names[tk.Label] = true
	}
	for _, want := range []string{"token", "! broken", "mutant-b"} {
		if !names[want] {
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
