package plots

import (
	"fmt"
	"image/color"
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

// SMCSteering draws smc-steering on one model: the relative variance
// Var(Ẑ)/Z² (top) and the total variation between the weighted particles
// and the exact posterior (bottom) vs the particle count N, log–log, one
// colour per correct resampling scheme and one line style per expansion
// factor K (planted bugs are left out; their rows are in the table).
func SMCSteering(rows []table.Row, model string) (*Figure, error) {
	if err := need("smc-steering", rows, "model", "scheme", "k", "n", "mutant", "relative_variance", "posterior_tv"); err != nil {
		return nil, err
	}
	sub := table.Where(rows, table.And(table.Eq("model", model), table.Eq("mutant", "false")))
	if len(sub) == 0 {
		return nil, fmt.Errorf("plots: smc-steering has no rows for model %s", model)
	}
	top := newPanel("particles N", "Var(Ẑ)/Z²")
	bot := newPanel("particles N", "TV(weighted particles, P)")
	for _, p := range []*plot.Plot{top, bot} {
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
		p.Y.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
	}
	f := &Figure{Name: "smc-steering", Panels: []*plot.Plot{top, bot}, LegendCols: 3, PanelHeight: 2 * vg.Inch,
		Caption: fmt.Sprintf("SMC steering on the Feynman–Kac model %s against exact enumeration: relative variance of the evidence estimate Ẑ (top) and total variation between the weighted particles and the exact posterior (bottom) vs the number of particles N, for each resampling scheme (colour) and expansion factor K (line style). fc is Algorithm 5 with the exact threshold c*; is is importance sampling (K = 1).", model)}
	ks := table.Distinct(sub, "k")
	styles := map[float64][]vg.Length{1: dotted, 2: nil, 4: dashed}
	schemes := table.DistinctS(sub, "scheme")
	slices.SortStableFunc(schemes, func(a, b string) int { return idx(smcSchemeOrder, a) - idx(smcSchemeOrder, b) })
	for _, s := range schemes {
		st, ok := smcStyles[s]
		if !ok {
			st = StyleOf(s)
		}
		for _, k := range ks {
			rs := table.Where(sub, table.And(table.Eq("scheme", s), func(r table.Row) bool { return table.Num(r, "k") == k }))
			if len(rs) == 0 {
				continue
			}
			d := styles[k]
			rv, tv := positive(xy(rs, "n", "relative_variance")), positive(xy(rs, "n", "posterior_tv"))
			top.Add(line(rv, st.Color, d), marks(rv, st.Color, st.Shape))
			bot.Add(line(tv, st.Color, d), marks(tv, st.Color, st.Shape))
		}
		f.AddLegend(s, line(nil, st.Color, nil), marks(nil, st.Color, st.Shape))
	}
	var ticks []plot.Tick
	for _, n := range table.Distinct(sub, "n") {
		ticks = append(ticks, plot.Tick{Value: n, Label: fmt.Sprint(n)})
	}
	top.X.Tick.Marker, bot.X.Tick.Marker = plot.ConstantTicks(ticks), plot.ConstantTicks(ticks)
	for _, k := range ks {
		f.AddLegend(fmt.Sprintf("K = %g", k), line(nil, color.Black, styles[k]))
	}
	return f, nil
}

// positive drops the points a log axis cannot show (y ≤ 0, NaN, ±Inf).
func positive(pts plotter.XYs) plotter.XYs {
	var out plotter.XYs
	for _, p := range pts {
		if p.Y > 0 && !math.IsInf(p.Y, 1) {
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
