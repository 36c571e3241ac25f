package plots

import (
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Issue 23: a panel whose data hold NaN and ±Inf (axis ranges gonum
// cannot tick) renders in every format instead of looping or panicking.
func TestFigureNonFinite(t *testing.T) {
	t.Parallel()
	mk := func() *Figure {
		lin, lg := newPanel("x", "y"), newPanel("x", "y")
		lg.Y.Scale, lg.Y.Tick.Marker = plot.LogScale{}, inRange{plot.LogTicks{Prec: -1}}
		pts := plotter.XYs{{X: math.NaN(), Y: 1}, {X: math.Inf(1), Y: math.Inf(-1)}, {X: 0, Y: 0}}
		lin.Add(line(pts, StyleOf("token").Color, nil))
		lg.Add(line(positive(pts), StyleOf("token").Color, nil)) // as the log figures do
		for _, p := range []*plot.Plot{lin, lg} {
			p.X.Min, p.X.Max = math.NaN(), math.Inf(1)
		}
		return &Figure{Name: "t", Panels: []*plot.Plot{lin, lg, newPanel("empty", "log")}}
	}
	for _, f := range []string{"pdf", "png", "svg"} {
		if _, err := mk().Render(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
