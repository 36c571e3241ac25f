package plots

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Problems finds each defect it names, and nothing in a figure without
// them.
func TestProblems(t *testing.T) {
	pts := plotter.XYs{{X: 1, Y: 0.1}, {X: 2, Y: 0.2}}
	// four dotted lines in neighbouring sequential colours, as the
	// conf:τ policies were drawn
	dots := &Figure{Name: "dots", Panels: []*plot.Plot{newPanel("x", "y")}}
	for i := range 4 {
		l := line(pts, Seq(i, 5), dotted)
		dots.Panels[0].Add(l)
		dots.AddLegend(string(rune('a'+i)), l)
	}
	// one log axis labelled once, as the SMC panels were
	logs := &Figure{Name: "logs", Panels: []*plot.Plot{newPanel("x", "y")}}
	logs.Panels[0].Y.Scale = plot.LogScale{}
	logs.Panels[0].Y.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
	logs.Panels[0].Add(line(plotter.XYs{{X: 1, Y: 0.07}, {X: 2, Y: 0.5}}, Seq(0, 1), nil))
	// a band without a legend entry, as the drafters' grey overlap
	bands := bandFigure()
	bands.entries = nil
	for _, c := range []struct {
		f    *Figure
		want string
	}{{dots, "legend entries"}, {logs, "labelled ticks"}, {bands, "translucent band"}} {
		got := c.f.Problems()
		if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), c.want) {
			t.Errorf("%s: problems %q, want one about %s", c.f.Name, got, c.want)
		}
	}
	fixed := bandFigure()
	fixed.AddLegend("95% interval", bandLegend())
	logs.Panels[0].Y.Tick.Marker = logTicks{}
	for _, f := range []*Figure{fixed, logs} {
		if got := f.Problems(); len(got) > 0 {
			t.Errorf("%s: problems %q in a readable figure", f.Name, got)
		}
	}
}
