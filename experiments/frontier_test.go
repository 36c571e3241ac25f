package experiments

import (
	"math"
	"testing"
)

// frontierAt interpolates exactly as documented: linear from KL = 0 to
// the first positive point, linear in log KL between positive points,
// flat beyond the curve.
func TestFrontierAt(t *testing.T) {
	pts := [][2]float64{{0.1, 0.8}, {0, 0.5}, {0.001, 0.6}, {1e-15, 0.5}}
	for _, c := range []struct{ kl, want float64 }{
		{0, 0.5}, {1e-13, 0.5}, {0.0005, 0.55}, {0.001, 0.6},
		{0.01, 0.7}, // log-midpoint of 0.001 and 0.1
		{0.1, 0.8}, {5, 0.8},
	} {
		got, ok := frontierAt(pts, c.kl)
		if !ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("frontierAt(%g) = %g, %v; want %g", c.kl, got, ok, c.want)
		}
	}
	if _, ok := frontierAt(nil, 0.1); ok {
		t.Error("frontierAt(no points) ok")
	}
}

// The table's gap is measured against the curve the figure draws (the
// context-averaged mentored rows), not the stored per-context "gap": a
// rule whose stored gap is 0 but lies below the drawn curve gets the
// positive distance to it.
func TestFrontierTableGapIsTheFigures(t *testing.T) {
	row := func(rule string, value, acc, kl, gap float64) Row {
		return Row{{K: "source", V: "dirichlet"}, {K: "V", V: int64(10)}, {K: "quality", V: 0.6}, {K: "rule", V: rule},
			{K: "param", V: "x"}, {K: "value", V: value}, {K: "acceptance", V: acc}, {K: "kl", V: kl}, {K: "tv", V: 0.1}, {K: "gap", V: gap}}
	}
	rows := []Row{row("mentored", 0, 0.5, 0, 0), row("mentored", 0.001, 0.6, 0.001, 0), row("mentored", 0.1, 0.8, 0.1, 0),
		row("cascade", 1, 0.65, 0.01, 0)}
	tab := frontierTable(rows, "dirichlet", 10, 0.6, 0.01)
	var got []string
	for _, r := range tab.Rows {
		if r[0] == "cascade" {
			got = r
		}
	}
	if got == nil || got[6] != "0.700" || got[7] != "0.050" {
		t.Fatalf("cascade row %q, want frontier α 0.700 and gap 0.050", got)
	}
}
