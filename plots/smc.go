package plots

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/specsim/specsim/table"
)

// smcSchemeOrder fixes the legend order of the SMC figure's schemes and
// smcStyles their colours and markers (kept here: scheme names are not
// algorithm names, and hashed colours collided).
var (
	smcSchemeOrder = []string{"fc", "fc-bisect", "is", "multinomial", "systematic", "stratified"}
	smcStyles      = map[string]Style{
		"fc":          {rgb(0x000000), circle, nil},
		"fc-bisect":   {rgb(0x7F7F7F), ring, nil},
		"is":          {rgb(0xE69F00), triangle, nil},
		"multinomial": {rgb(0xD55E00), cross, nil},
		"systematic":  {rgb(0x0072B2), square, nil},
		"stratified":  {rgb(0x009E73), plus, nil},
	}
)

// SMCSteering draws smc-steering on one model as small multiples: one
// column per expansion factor K, the relative variance Var(Ẑ)/Z² (top
// row) and the total variation between the weighted particles and the
// exact posterior (bottom row) vs the particle count N, log–log, one
// colour and marker per correct resampling scheme (planted bugs are left
// out; their rows are in the table). The figure is named name.
func SMCSteering(rows []table.Row, model, name string) (*Figure, error) {
	if err := need("smc-steering", rows, "model", "scheme", "k", "n", "mutant", "relative_variance", "posterior_tv"); err != nil {
		return nil, err
	}
	sub := table.Where(rows, table.And(table.Eq("model", model), table.Eq("mutant", "false")))
	if len(sub) == 0 {
		return nil, fmt.Errorf("plots: smc-steering has no rows for model %s", model)
	}
	ks := table.Distinct(sub, "k")
	f := &Figure{Name: name, Width: TextWidth, GridCols: len(ks), LegendCols: 6, PanelHeight: 1.75 * vg.Inch,
		Caption: fmt.Sprintf("SMC steering on the Feynman–Kac model %s against exact enumeration, one column per expansion factor K: relative variance of the evidence estimate Ẑ (top) and total variation between the weighted particles and the exact posterior (posterior TV, bottom) vs the number of particles N, log–log, per resampling scheme. fc is Algorithm 5 with the exact threshold c*, fc-bisect the same with c* found by bisection; is is importance sampling (K = 1 only).", model)}
	schemes := table.DistinctS(sub, "scheme")
	slices.SortStableFunc(schemes, func(a, b string) int { return idx(smcSchemeOrder, a) - idx(smcSchemeOrder, b) })
	var ticks []plot.Tick
	for _, n := range table.Distinct(sub, "n") {
		ticks = append(ticks, plot.Tick{Value: n, Label: fmt.Sprint(n)})
	}
	ns := table.Distinct(sub, "n")
	for mi, m := range []struct{ col, label string }{{"relative_variance", "Var(Ẑ)/Z²"}, {"posterior_tv", "posterior TV"}} {
		lo, hi := positiveRange(sub, m.col)
		for ki, k := range ks {
			p := newPanel("", "")
			if ki == 0 {
				p.Y.Label.Text = m.label
			}
			if mi == 1 {
				p.X.Label.Text = "particles N"
			} else {
				p.Title.Text = fmt.Sprintf("K = %g", k)
				p.Title.Padding = vg.Points(2)
			}
			p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
			p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(ticks), logTicks{}
			if len(ticks) < minLogLabels {
				p.X.Tick.Marker = logTicks{}
			}
			for _, s := range schemes {
				rs := table.Where(sub, table.And(table.Eq("scheme", s), func(r table.Row) bool { return table.Num(r, "k") == k }))
				if len(rs) == 0 {
					continue
				}
				st, ok := smcStyles[s]
				if !ok {
					st = StyleOf(s)
				}
				pts := positive(xy(rs, "n", m.col))
				l, mk := line(pts, st.Color, nil), marks(pts, st.Color, st.Shape)
				p.Add(l, mk)
				f.AddLegend(s, l, mk)
			}
			p.X.Min, p.X.Max = ns[0]/1.25, ns[len(ns)-1]*1.25
			p.Y.Min, p.Y.Max = lo, hi
			f.Panels = append(f.Panels, p)
		}
	}
	// the legend in the order of smcSchemeOrder, whichever panel drew a
	// scheme first
	slices.SortStableFunc(f.entries[0], func(a, b legendEntry) int { return idx(smcSchemeOrder, a.name) - idx(smcSchemeOrder, b.name) })
	return f, nil
}

// positiveRange is the range of the positive values of col over rows,
// widened by a factor 1.25 at each end (a log axis); [0.1, 1] when there
// are none.
func positiveRange(rows []table.Row, col string) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if y := table.Num(r, col); y > 0 && !math.IsInf(y, 1) {
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	if lo > hi {
		return 0.1, 1
	}
	return lo / 1.25, hi * 1.25
}

// positive drops the points a log axis cannot show (y ≤ 0 or not finite).
func positive(pts plotter.XYs) plotter.XYs {
	var out plotter.XYs
	for _, p := range finite(pts) {
		if p.Y > 0 {
			out = append(out, p)
		}
	}
	return out
}

func idx(xs []string, s string) int {
	if i := slices.Index(xs, s); i >= 0 {
		return i
	}
	return len(xs)
}
