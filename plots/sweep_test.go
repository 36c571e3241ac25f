package plots

import (
	"math"
	"slices"
	"strings"
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
	figs := sweepFigures(t, rows, []string{"algo", "gamma", "trials"}, []string{"m", "m_lo", "m_hi", "note", "other"},
		"s-vs-algo", "s-vs-gamma") // trials has one value
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

// TestSweepReplicates: replicates are pooled, not drawn as an axis or as
// curves: one figure per real axis, one curve per other axis value, each
// point the mean over the replicates with its Student-t interval as the
// band (values chosen so mean and interval are known by hand).
func TestSweepReplicates(t *testing.T) {
	var rows []table.Row
	for _, a := range []string{"token", "block"} {
		for _, g := range []int64{1, 2} {
			for rep, d := range []float64{-1, 0, 1, 0} { // mean 0, sd √(2/3)
				m := float64(10*g) + d
				rows = append(rows, table.Row{{K: "algo", V: a}, {K: "gamma", V: g}, {K: "replicate", V: int64(rep)},
					{K: "m", V: m}, {K: "m_lo", V: m - 5}, {K: "m_hi", V: m + 5}})
			}
		}
	}
	figs := sweepFigures(t, rows, []string{"algo", "gamma", "replicate"}, []string{"m", "m_lo", "m_hi"},
		"s-vs-algo", "s-vs-gamma") // replicate is not an axis
	if got := figs[1].LegendNames(); !slices.Equal(got, []string{"algo=token", "algo=block"}) {
		t.Errorf("legend %v, want one curve per algo", got)
	}
	if !strings.Contains(figs[1].Caption, "mean over 4 replicates") {
		t.Errorf("caption does not say the points pool 4 replicates: %s", figs[1].Caption)
	}
	pooled, axes, _ := poolReplicates(rows, []string{"algo", "gamma", "replicate"}, []string{"m", "m_lo", "m_hi"})
	if len(pooled) != 4 || !slices.Equal(axes, []string{"algo", "gamma"}) {
		t.Fatalf("%d pooled rows, axes %v; want 4 rows, algo and gamma", len(pooled), axes)
	}
	half := 3.182446305284263 * math.Sqrt(2.0/3) / 2 // t_3(0.975)·sd/√4
	for _, r := range pooled {
		want := 10 * table.Num(r, "gamma")
		if m, lo, hi := table.Num(r, "m"), table.Num(r, "m_lo"), table.Num(r, "m_hi"); m != want || math.Abs(lo-(want-half)) > 1e-9 || math.Abs(hi-(want+half)) > 1e-9 {
			t.Errorf("%v: m %v [%v, %v], want %v ∓ %v", r, m, lo, hi, want, half)
		}
	}
}

// sweepFigures draws sweep "s" and fails unless the figures are named want.
func sweepFigures(t *testing.T, rows []table.Row, axes, metrics []string, want ...string) []*Figure {
	t.Helper()
	figs, err := Sweep("s", rows, axes, metrics)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("figures %v, want %v", names, want)
	}
	return figs
}

// SweepColumns: text and integer columns are axes, float columns metrics,
// but a float column of one value in every row (the trials n) is neither;
// a single row keeps its floats as metrics.
func TestSweepColumnsConstant(t *testing.T) {
	rows := []table.Row{
		{{K: "experiment", V: "x"}, {K: "rule", V: "token"}, {K: "gamma", V: int64(1)}, {K: "n", V: 1000.0}, {K: "alpha", V: 0.5}},
		{{K: "experiment", V: "x"}, {K: "rule", V: "token"}, {K: "gamma", V: int64(2)}, {K: "n", V: 1000.0}, {K: "alpha", V: 0.6}},
	}
	axes, metrics := SweepColumns(rows)
	if strings.Join(axes, ",") != "rule,gamma" || strings.Join(metrics, ",") != "alpha" {
		t.Errorf("axes %q, metrics %q; want rule,gamma and alpha (n is constant)", axes, metrics)
	}
	if _, metrics := SweepColumns(rows[:1]); strings.Join(metrics, ",") != "n,alpha" {
		t.Errorf("one row: metrics %q, want n,alpha", metrics)
	}
}

// A generic sweep panel labels its axes with the columns' words, not
// their raw names: beta_target and mean_emitted read "beta target" and
// "mean emitted".
func TestSweepAxisLabels(t *testing.T) {
	var rows []table.Row
	for _, b := range []float64{0.3, 0.6} {
		rows = append(rows, table.Row{{K: "beta_target", V: b}, {K: "mean_emitted", V: 1 + b}})
	}
	figs, err := Sweep("x", rows, []string{"beta_target"}, []string{"mean_emitted"})
	if err != nil {
		t.Fatal(err)
	}
	p := figs[0].Panels[0]
	if p.X.Label.Text != "beta target" || p.Y.Label.Text != "mean emitted" {
		t.Errorf("axes %q and %q, want beta target and mean emitted", p.X.Label.Text, p.Y.Label.Text)
	}
}
