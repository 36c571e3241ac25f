package plots

import (
	"fmt"
	"math"
	"regexp"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/specsim/specsim/table"
)

// extremes are the numeric values a results table can carry that broke
// figure code (issue 23: NaN, ±Inf; issue 30, H7: ±1e308, whose range
// overflows), with subnormals and the float64 limits around them.
var extremes = []float64{math.MaxFloat64, -math.MaxFloat64, 1e308, -1e308, math.Inf(1), math.Inf(-1), math.NaN(),
	5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 0, math.Copysign(0, -1), 1, 1e300}

// extremeTables generates small sweep tables from the extremes: every
// ordered pair (a, b) as the metric, the band and the swept axis, and each
// value repeated (a range of width 0).
func extremeTables() map[string][]table.Row {
	out := map[string][]table.Row{}
	for i, a := range extremes {
		for j, b := range extremes {
			for _, shape := range []string{"metric", "axis", "band"} {
				var rows []table.Row
				for k, v := range []float64{a, b, 0.5} {
					x, m, lo, hi := any(int64(k+1)), 0.25+float64(k), -1.0, 2.0
					switch shape {
					case "metric":
						m = v
					case "axis":
						x = v
					case "band":
						lo, hi = v, -v
					}
					rows = append(rows, table.Row{{K: "x", V: x}, {K: "m", V: m}, {K: "m_lo", V: lo}, {K: "m_hi", V: hi}})
				}
				out[fmt.Sprintf("%s-%d-%d", shape, i, j)] = rows
			}
		}
	}
	return out
}

// h7 names the tables of issue 30's H7 values as a metric.
var h7 = regexp.MustCompile(`^metric-[0-3]-[0-3]$`)

// TestFigureExtremes: a sweep of any extreme values draws (in PNG, SVG
// and PDF) without a panic or a hang, and every panel's axes come out as
// finite, ordered ranges whose half-width is finite and positive (the
// full width of ±1e308 is not a float64; guardAxes' halfScale divides
// by halves).
func TestFigureExtremes(t *testing.T) {
	for name, rows := range extremeTables() {
		figs, err := Sweep(name, rows, []string{"x"}, []string{"m", "m_lo", "m_hi"})
		if err != nil {
			continue // nothing drawable (a single x value): an error, not a figure
		}
		for _, f := range figs {
			done := make(chan any, 1)
			go func() {
				defer func() { done <- recover() }()
				f.Draw(draw.New(vgimg.New(3*vg.Inch, 2*vg.Inch)))
				if h7.MatchString(name) { // every format, for H7's values (±MaxFloat64, ±1e308)
					for _, format := range []string{"png", "svg", "pdf"} {
						if _, err := f.Render(format); err != nil {
							panic(err)
						}
					}
				}
			}()
			select {
			case p := <-done:
				if p != nil {
					t.Fatalf("%s: drawing panicked: %v (rows %v)", name, p, rows)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: drawing did not end in 10 s (rows %v)", name, rows)
			}
			for _, p := range f.Panels {
				for _, a := range []plot.Axis{p.X, p.Y} {
					if w := a.Max/2 - a.Min/2; math.IsNaN(w) || math.IsInf(w, 0) || !(w > 0) {
						t.Errorf("%s: axis range [%g, %g]", name, a.Min, a.Max)
					}
				}
			}
		}
	}
}
