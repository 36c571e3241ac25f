package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// Problems lists what makes the figure hard to read, one line each:
//
//   - two legend entries a reader cannot tell apart: the same dashes, the
//     same marker (or none) and colours closer than minSameFigure in
//     CIEDE2000;
//   - a log axis with fewer than minLogLabels labelled ticks in its range;
//   - a translucent band drawn in a panel while no legend entry shows a
//     band (what is the shaded area?).
//
// Every figure the report draws has none (report's tests).
func (f *Figure) Problems() []string {
	var out []string
	type entry struct {
		name string
		s    entryStyle
	}
	legendBand := false
	// each legend strip describes the panels below it
	for _, strip := range f.entries {
		var es []entry
		for _, e := range strip {
			es = append(es, entry{e.name, styleOfThumbs(e.thumbs)})
		}
		for i, a := range es {
			legendBand = legendBand || a.s.band
			for _, b := range es[i+1:] {
				if need := colourNeeded(a.s, b.s); need > 0 && ColourDistance(a.s.col, b.s.col) < need {
					out = append(out, fmt.Sprintf("%s: legend entries %q and %q differ by ΔE00 = %.1f < %g with the same dashes and marker",
						f.Name, a.name, b.name, ColourDistance(a.s.col, b.s.col), need))
				}
			}
		}
	}
	for i, p := range f.Panels {
		for _, ax := range []struct {
			name string
			a    *plot.Axis
		}{{"x", &p.X}, {"y", &p.Y}} {
			if _, isLog := ax.a.Scale.(plot.LogScale); isLog {
				if n := labelledTicks(ax.a); n < minLogLabels {
					out = append(out, fmt.Sprintf("%s: panel %d's log %s axis has %d labelled ticks in [%g, %g]; want at least %d",
						f.Name, i+1, ax.name, n, ax.a.Min, ax.a.Max, minLogLabels))
				}
			}
		}
		if !legendBand && drawsBand(p) {
			out = append(out, fmt.Sprintf("%s: panel %d draws a translucent band that no legend entry explains", f.Name, i+1))
		}
	}
	return out
}

// entryStyle is what tells a legend entry apart: its colour, dash pattern
// and marker, and whether it shows a band.
type entryStyle struct {
	col           color.Color
	dashes, shape string
	band          bool
}

func styleOfThumbs(thumbs []plot.Thumbnailer) entryStyle {
	s := entryStyle{col: color.Black}
	colSet := false
	setCol := func(c color.Color) {
		if !colSet && c != nil {
			s.col, colSet = c, true
		}
	}
	for _, t := range thumbs {
		switch t := t.(type) {
		case *plotter.Line:
			s.dashes = fmt.Sprint(t.LineStyle.Dashes)
			setCol(t.LineStyle.Color)
		case *plotter.Scatter:
			s.shape = fmt.Sprintf("%T", t.GlyphStyle.Shape)
			setCol(t.GlyphStyle.Color)
		case *plotter.Polygon:
			s.band = true
			setCol(t.Color)
		}
	}
	return s
}

// colourNeeded is the CIEDE2000 difference two legend entries need to be
// told apart: none when their dashes, markers or bands differ, else
// minSameFigure, and twice that for dotted or dashed lines without
// markers, whose colour shows on a few thin strokes only (four dotted
// conf:τ lines at ΔE00 25 to 33 could not be told apart).
func colourNeeded(a, b entryStyle) float64 {
	switch {
	case a.dashes != b.dashes || a.shape != b.shape || a.band != b.band:
		return 0
	case a.shape == "" && !a.band && a.dashes != "[]":
		return 2 * minSameFigure
	}
	return minSameFigure
}

// drawsBand reports whether panel p fills a path in a translucent colour.
func drawsBand(p *plot.Plot) bool {
	var rec recorder.Canvas
	p.Draw(draw.Canvas{Canvas: &rec, Rectangle: vg.Rectangle{Max: vg.Point{X: 3 * vg.Inch, Y: 2 * vg.Inch}}})
	translucent := false
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			translucent = false
			if a.Color != nil {
				_, _, _, al := a.Color.RGBA()
				translucent = al > 0 && al < 0xffff
			}
		case *recorder.Fill:
			if translucent {
				return true
			}
		}
	}
	return false
}
