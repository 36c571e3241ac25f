package plots

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/specsim/specsim/table"
)

// verdictStyles are the audit figure's colour and marker per final
// verdict.
var verdictStyles = map[string]Style{
	"not_detected": {rgb(0x0072B2), circle, nil},
	"violated":     {rgb(0xD55E00), cross, nil},
	"lossy":        {rgb(0xE69F00), triangle, nil},
	"inconclusive": {rgb(0x7F7F7F), ring, nil},
}

// auditZero is the exact TV below which the emitted law is the target's
// to rounding: drawn in a column labelled 0 left of the log axis.
const auditZero = 1e-12

// Audit draws the audit, one line per row (rule, setting or mutant): the
// exact engine's TV between the emitted law and the target's (the
// largest over the audit's pairs; a marker in the colour and shape of the
// row's final verdict) against the TV its χ² check detects with power 0.9
// (a grey bar from the axis' left end: deviations inside the bar can go
// unseen). Rows whose final verdict is not the expected one are named
// with a leading "!". The rows fill two panels side by side, the first
// half on the left (a figure as wide as the text, half as tall as one
// column of 38 rows).
func Audit(rows []table.Row) (*Figure, error) {
	if err := need("audit", rows, "algorithm", "kind", "verdict", "ok", "exact_tv", "min_detectable_tv"); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: audit has no rows")
	}
	xMin := 1e-4
	for _, r := range rows {
		for _, c := range []string{"exact_tv", "min_detectable_tv"} {
			if v := table.Num(r, c); v >= auditZero && v < xMin {
				xMin = math.Pow(10, math.Floor(math.Log10(v)))
			}
		}
	}
	half := (len(rows) + 1) / 2
	cols := 2
	if len(rows) < 2 {
		half, cols = len(rows), 1
	}
	f := &Figure{Name: "audit", LegendCols: 3, Width: TextWidth, GridCols: cols, PanelHeight: 0.155*vg.Inch*vg.Length(half) + 0.5*vg.Inch,
		Caption: "The losslessness audit drawn: per rule, setting and mutant (top to bottom as in the table, left panel first), the exact engine's TV between the emitted law and the target's (largest over the audit's model pairs; marker: the row's final verdict) " +
			"and the TV the χ² check detects with power 0.9 (grey bar: a deviation that small can go unseen). TV below 10⁻¹² (the lossless rules, to rounding) is the column labelled 0 left of the dotted break; a row without an exact law has no marker, and its name says where its verdict came from; a violated marker there is a rule whose law is right but whose batches are not (the edge column). A row named with a leading ! ended with a verdict other than the expected one."}
	seen := map[string]bool{}
	for start := 0; start < len(rows); start += half {
		p, err := auditPanel(f, rows[start:min(start+half, len(rows))], half, xMin, seen)
		if err != nil {
			return nil, err
		}
		f.Panels = append(f.Panels, p)
	}
	bar := line(nil, color.Gray{Y: 0xb0}, nil)
	bar.Width = vg.Points(3.5)
	f.AddLegend("TV detected with power 0.9", bar)
	return f, nil
}

// auditPanel draws rows top to bottom in a panel of n lines (the last
// panel may hold fewer rows; its lines start at the top), adding each
// verdict's legend entry to f once (seen).
func auditPanel(f *Figure, rows []table.Row, n int, xMin float64, seen map[string]bool) (*plot.Plot, error) {
	zeroAt := xMin / math.Pow(10, 1.5)
	lo, hi := zeroAt/3, 1.5
	p := newPanel("total variation (TV) from the target law", "")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = klTicks{zero: zeroAt, first: xMin}
	brk := math.Sqrt(zeroAt * xMin)
	names := make([]string, n)
	for i, r := range rows {
		y := float64(n - 1 - i)
		name := r.String("algorithm")
		if ps := r.String("params"); ps != "" {
			name += " (" + ps + ")"
		}
		if r.String("ok") != "true" {
			name = "! " + name
		}
		names[n-1-i] = name
		if d := table.Num(r, "min_detectable_tv"); d > 0 && !math.IsNaN(d) {
			bar := line(plotter.XYs{{X: lo, Y: y}, {X: math.Min(d, hi), Y: y}}, color.Gray{Y: 0xb0}, nil)
			bar.Width = vg.Points(3.5)
			p.Add(bar)
		}
		v := r.String("verdict")
		st, ok := verdictStyles[v]
		if !ok {
			st = StyleOf(v)
		}
		tv := table.Num(r, "exact_tv")
		if math.IsNaN(tv) {
			// no exact law, so no marker: the row's name says where its
			// verdict came from (written over the bar, it hid the bar)
			lab := " (no law: " + strings.ReplaceAll(v, "_", " ") + ")"
			if e := r.String("edge_verdict"); e == "violated" {
				lab = " (no law; edge cases: violated)"
			}
			names[n-1-i] += lab
		}
		if !math.IsNaN(tv) {
			x := tv
			if x < auditZero {
				x = zeroAt
			}
			m := marks(plotter.XYs{{X: x, Y: y}}, st.Color, st.Shape)
			m.GlyphStyle.Radius = vg.Points(2.6)
			p.Add(m)
			if !seen[v] {
				seen[v] = true
				f.AddLegend("exact TV, final verdict "+strings.ReplaceAll(v, "_", " "), marks(nil, st.Color, st.Shape))
			}
		}
	}
	sep := line(plotter.XYs{{X: brk, Y: -0.5}, {X: brk, Y: float64(n) - 0.5}}, color.Gray{Y: 0x99}, dotted)
	sep.Width = vg.Points(0.6)
	p.Add(sep)
	p.NominalY(names...)
	p.Y.Tick.Label.Font.Size = tickSize
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3
	return p, nil
}
