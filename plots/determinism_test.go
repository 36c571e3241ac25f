package plots

import (
	"bytes"
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Issue 23: a figure's PDF carries a fixed date, not the clock, so two
// runs write the same bytes; and a panel whose data hold NaN and ±Inf
// (axis ranges gonum cannot tick) renders in every format instead of
// looping or panicking.
func TestFigurePDFDeterministicAndNonFinite(t *testing.T) {
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
	var first []byte
	for i := range 2 {
		b, err := mk().Render("pdf")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("/CreationDate (D:19700101000000)")) {
			t.Errorf("the PDF's date is not the fixed one")
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Errorf("two renders of one figure differ")
		}
	}
	for _, f := range []string{"png", "svg"} {
		if _, err := mk().Render(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
