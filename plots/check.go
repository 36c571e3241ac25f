package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/specsim/specsim/sim/check"
)

// CheckProfile draws a check's profile: one small panel per position, the
// observed share of the emitted token's PIT in each of its bins against
// the expected share (flat at 1/bins under the hypothesis), so a reader
// sees at which position, and where in the token order, mass moved.
func CheckProfile(name, title string, prof []check.PositionProfile) (*Figure, error) {
	if len(prof) == 0 {
		return nil, fmt.Errorf("plots: the check has no profile (a losslessness check with Config.Profile has one)")
	}
	f := &Figure{Name: name, GridCols: min(len(prof), 3), PanelHeight: 1.6 * vg.Inch, Width: 2 * ColumnWidth,
		Caption: title + ". Per position, the observed share of the emitted token's randomised PIT under its exact target law given the emitted prefix (tokens in index order) in each of its bins (points), against the expected share (line: flat under the hypothesis). Bins far from the line show where the emitted law moved mass."}
	obsC, expC := Seq(0, 2), color.RGBA{A: 255} // observed in colour, expected black
	for _, pp := range prof {
		p := newPanel(fmt.Sprintf("PIT bin of position %d (n = %d)", pp.Position, pp.N), "share of emitted tokens")
		var o, e plotter.XYs
		for b := range pp.Observed {
			x := (float64(b) + 0.5) / float64(len(pp.Observed))
			o = append(o, plotter.XY{X: x, Y: pp.Observed[b]})
			e = append(e, plotter.XY{X: x, Y: pp.Expected[b]})
		}
		p.Add(line(e, expC, nil), marks(o, obsC, draw.CircleGlyph{}))
		p.X.Min, p.X.Max = 0, 1
		p.Y.Min = 0
		f.Panels = append(f.Panels, p)
	}
	f.AddLegend("observed", marks(nil, obsC, draw.CircleGlyph{}))
	f.AddLegend("expected", line(nil, expC, nil))
	return f, nil
}
