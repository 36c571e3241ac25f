package plots

import (
	"math"
	"testing"

	"github.com/specsim/specsim/table"
)

// The throughput figure has its three panels (cost against V, against γ,
// and the trees' against k), one curve per rule, and reads.
func TestThroughputFigure(t *testing.T) {
	var rows []table.Row
	add := func(kind, rule string, v, g, k int64, ns float64) {
		rows = append(rows, table.Row{{K: "kind", V: kind}, {K: "V", V: v}, {K: "gamma", V: g}, {K: "k", V: k}, {K: "rule", V: rule}, {K: "cpu_ns_per_step", V: ns}})
	}
	for _, rule := range []string{"token", "mentored"} {
		for i, v := range []int64{1000, 4000, 32000} {
			add("chain", rule, v, 4, 1, float64(1000*(i+1)))
		}
		for _, g := range []int64{1, 2, 8} {
			add("chain", rule, 32000, g, 1, float64(500*g))
		}
	}
	for _, k := range []int64{2, 4, 8} {
		add("tree", "specinfer", 4000, 4, k, float64(300*k))
	}
	f, err := Throughput(rows, 32000, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 3 || len(f.LegendNames()) != 3 {
		t.Errorf("%d panels, legend %v; want 3 panels and token, mentored, specinfer", len(f.Panels), f.LegendNames())
	}
	for _, p := range f.Problems() {
		t.Error(p)
	}
	// the axes are in µs, the unit of the tables and the text: the rows'
	// 1000 to 3000 ns at γ = 4 span 0.8 to 3.75 µs (the range's 1.25 margin)
	if p := f.Panels[0]; p.Y.Label.Text != "CPU µs per step" || math.Abs(p.Y.Min-0.8) > 1e-12 || math.Abs(p.Y.Max-3.75) > 1e-12 {
		t.Errorf("V panel: y axis %q over [%g, %g], want CPU µs per step over [0.8, 3.75]", p.Y.Label.Text, p.Y.Min, p.Y.Max)
	}
	if _, err := f.Render("png"); err != nil {
		t.Fatal(err)
	}
	if _, err := Throughput(rows[len(rows)-3:], 32000, 4); err == nil {
		t.Error("no chain rows: no error")
	}
}
