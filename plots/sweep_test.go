package plots

import (
	"slices"
	"testing"

	"github.com/specsim/specsim/table"
)

// Sweep draws one figure per swept axis, one panel per numeric metric
// (intervals are bands, not panels), one curve per value of the other
// swept axes, and a band exactly where the rows carry m_lo/m_hi.
func TestSweep(t *testing.T) {
	var rows []table.Row
	for _, a := range []string{"token", "block"} {
		for _, g := range []int64{1, 2, 3} {
			m := float64(g) + 0.1
			rows = append(rows, table.Row{{K: "algo", V: a}, {K: "gamma", V: g}, {K: "trials", V: int64(100)},
				{K: "m", V: m}, {K: "m_lo", V: m - 0.05}, {K: "m_hi", V: m + 0.05}, {K: "note", V: "x"}, {K: "other", V: 2 * m}})
		}
	}
	figs, err := Sweep("s", rows, []string{"algo", "gamma", "trials"}, []string{"m", "m_lo", "m_hi", "note", "other"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"s-vs-algo", "s-vs-gamma"}) {
		t.Fatalf("figures %v, want s-vs-algo, s-vs-gamma (trials has one value)", names)
	}
	g := figs[1]
	if len(g.Panels) != 2 {
		t.Fatalf("%d panels, want 2 (m, other; note is text, m_lo/m_hi a band)", len(g.Panels))
	}
	if got := g.LegendNames(); !slices.Equal(got, []string{"algo=token", "algo=block"}) {
		t.Errorf("legend %v", got)
	}
	if lo, hi, ok := bandCols(rows[0], "m", false); !ok || lo != "m_lo" || hi != "m_hi" {
		t.Errorf("m's band: %s %s %v", lo, hi, ok)
	}
	if _, _, ok := bandCols(rows[0], "other", false); ok {
		t.Error("other has a band")
	}
	if _, err := Sweep("s", rows, []string{"trials"}, []string{"m"}); err == nil {
		t.Error("no swept axis: no error")
	}
	if _, err := Sweep("s", rows, []string{"gamma"}, []string{"note"}); err == nil {
		t.Error("no numeric metric: no error")
	}
	if _, err := Sweep("s", nil, []string{"gamma"}, []string{"m"}); err == nil {
		t.Error("no rows: no error")
	}
}
