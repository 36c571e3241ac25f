package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/specsim/specsim/table"
)

var (
	dashed = []vg.Length{vg.Points(4), vg.Points(2)}
	dotted = []vg.Length{vg.Points(1), vg.Points(1.5)}
)

func line(pts plotter.XYs, c color.Color, dashes []vg.Length) *plotter.Line {
	l := &plotter.Line{XYs: pts, LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: dashes}}
	return l
}

func marks(pts plotter.XYs, c color.Color, shape draw.GlyphDrawer) *plotter.Scatter {
	return &plotter.Scatter{XYs: pts, GlyphStyle: draw.GlyphStyle{Color: c, Shape: shape, Radius: vg.Points(2.2)}}
}

// band is a filled confidence band between lo and hi (same x); a band
// with a point that is not finite (gonum refuses such a polygon) has no
// ring and draws nothing.
func band(lo, hi plotter.XYs, c color.RGBA) *plotter.Polygon {
	var pts plotter.XYs
	pts = append(pts, lo...)
	for i := len(hi) - 1; i >= 0; i-- {
		pts = append(pts, hi[i])
	}
	poly, err := plotter.NewPolygon(pts)
	if err != nil {
		poly = &plotter.Polygon{}
	}
	poly.Color = color.NRGBA{c.R, c.G, c.B, 90} // not RGBA: that one is premultiplied
	// a hairline edge keeps a band visible where it is thinner than the
	// curve it surrounds
	poly.LineStyle = draw.LineStyle{Color: color.NRGBA{c.R, c.G, c.B, 160}, Width: vg.Points(0.4)}
	return poly
}

// styled returns a line and markers in the algorithm's fixed style.
func styled(pts plotter.XYs, name string) (*plotter.Line, *plotter.Scatter) {
	s := StyleOf(name)
	return line(pts, s.Color, s.Dashes), marks(pts, s.Color, s.Shape)
}

// padX widens the x range [lo, hi] by padFrac of its width on each side,
// so markers and tick labels at the ends are drawn whole, not clipped by
// the panel's edge.
func padX(p *plot.Plot, lo, hi float64) {
	d := padFrac * (hi - lo)
	p.X.Min, p.X.Max = lo-d, hi+d
}

// padFrac is the share of an axis' data range left blank at each end.
const padFrac = 0.05

func intTicks(p *plot.Plot, lo, hi, step int) {
	var ts []plot.Tick
	for v := lo; v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ts)
}

// Tokens draws leviathan-tokens: E[tokens per step] vs γ for each α, Eq. 1
// as lines, the exact engine's token verification as markers.
func Tokens(rows []table.Row) (*Figure, error) {
	if err := need("leviathan-tokens", rows, "alpha", "gamma", "eq1", "token_exact"); err != nil {
		return nil, err
	}
	p := newPanel("draft length γ", "E[tokens per step]")
	f := &Figure{Name: "leviathan-tokens", Panels: []*plot.Plot{p}, LegendCols: 3,
		Caption: "Expected tokens per step vs γ: Leviathan et al.'s Eq. 1 (1−α^(γ+1))/(1−α) (lines) and the exact engine's token verification (markers) on the constant-β pair p = (1 − α/2, α/2), q = (α/2, 1 − α/2), whose Σ min(p, q) = α at every position."}
	alphas := table.Distinct(rows, "alpha")
	for i, a := range slices.Backward(alphas) {
		_ = i
		sub := table.Where(rows, func(r table.Row) bool { return table.Num(r, "alpha") == a })
		c := Seq(len(alphas)-1-indexOf(alphas, a), len(alphas))
		l := line(xy(sub, "gamma", "eq1"), c, nil)
		m := marks(xy(sub, "gamma", "token_exact"), c, StyleOf("token").Shape)
		p.Add(l, m)
		f.AddLegend(fmt.Sprintf("α = %.2g", a), l, m)
	}
	gs := table.Distinct(rows, "gamma")
	intTicks(p, int(gs[0]), int(gs[len(gs)-1]), 1)
	padX(p, gs[0], gs[len(gs)-1])
	f.AddLegend("Eq. 1", line(nil, color.Black, nil))
	f.AddLegend("exact (token)", marks(nil, color.Black, StyleOf("token").Shape))
	p.Y.Min = 1
	return f, nil
}

func indexOf(xs []float64, v float64) int { return slices.Index(xs, v) }

// Walltime draws leviathan-walltime at α = alpha: the walltime improvement
// (Thm 3.8) vs γ for every cost ratio c, the best γ marked.
func Walltime(rows []table.Row, alpha float64) (*Figure, error) {
	if err := need("leviathan-walltime", rows, "alpha", "c", "gamma", "walltime", "is_best"); err != nil {
		return nil, err
	}
	rows = table.Where(rows, func(r table.Row) bool { return math.Abs(table.Num(r, "alpha")-alpha) < 1e-12 })
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: leviathan-walltime has no rows at α = %g", alpha)
	}
	p := newPanel("draft length γ", "walltime improvement (×)")
	f := &Figure{Name: "leviathan-walltime", Panels: []*plot.Plot{p}, LegendCols: 3,
		Caption: fmt.Sprintf("Walltime improvement (1−α^(γ+1))/((1−α)(γc+1)) (Leviathan et al. Thm 3.8) vs γ at α = %g for several cost ratios c; filled markers: the best γ.", alpha)}
	cs := table.Distinct(rows, "c")
	var edge []string
	for i, c := range cs {
		sub := table.Where(rows, func(r table.Row) bool { return table.Num(r, "c") == c })
		col := Seq(i, len(cs))
		l := line(xy(sub, "gamma", "walltime"), col, nil)
		best := table.Where(sub, table.Eq("is_best", "true"))
		// a best γ at the grid's edge is not the optimum: drawn hollow
		shape := draw.GlyphDrawer(draw.CircleGlyph{})
		if len(best) > 0 && best[0].String("best_at_edge") == "true" {
			shape = draw.RingGlyph{}
			edge = append(edge, fmt.Sprintf("c = %g: best γ = %g, S = %.2f", c, table.Num(best[0], "best_gamma_any"), table.Num(best[0], "best_walltime_any")))
		}
		m := marks(xy(best, "gamma", "walltime"), col, shape)
		m.GlyphStyle.Radius = vg.Points(3.2)
		p.Add(l, m)
		f.AddLegend(fmt.Sprintf("c = %g", c), l)
	}
	f.AddLegend("best γ", marks(nil, color.Black, draw.CircleGlyph{}))
	if len(edge) > 0 {
		f.AddLegend("best at the grid's edge", marks(nil, color.Black, draw.RingGlyph{}))
		f.Caption += fmt.Sprintf(" Hollow markers: the grid's best is its last γ and the optimum lies beyond it (%s).", strings.Join(edge, "; "))
	}
	gs := table.Distinct(rows, "gamma")
	intTicks(p, 0, int(gs[len(gs)-1]), 2)
	padX(p, gs[0], gs[len(gs)-1])
	p.Y.Min = 1
	return f, nil
}

// BlockVsToken draws block-vs-token in two panels: E[emitted per step] vs γ
// for token and block verification (paired Monte Carlo, 95% bands) at
// several draft qualities β; block's relative gain vs the measured β for
// several γ (Monte Carlo with 95% bars, exact Markov pairs dashed).
func BlockVsToken(rows []table.Row) (*Figure, error) {
	if err := need("block-vs-token", rows, "source", "beta_target", "gamma", "rule", "kind", "beta_measured", "mean_emitted", "ci_lo", "ci_hi", "gain_pct"); err != nil {
		return nil, err
	}
	mc := table.Where(rows, table.Eq("kind", "mc"))
	if len(mc) == 0 {
		return nil, fmt.Errorf("plots: block-vs-token has no Monte Carlo rows (kind = mc)")
	}
	top := newPanel("draft length γ", "E[emitted per step]")
	bot := newPanel("draft quality β = Σ min(p, q)", "block gain over token (%)")
	f := &Figure{Name: "block-vs-token", Panels: []*plot.Plot{top, bot}, LegendCols: 3, PanelHeight: 2 * vg.Inch,
		Caption: "Block vs token verification. Top: emitted tokens per step vs γ, paired Monte Carlo on dirichlet:V=2048 pools at three draft qualities β (line style), 95% bands. Bottom: block's relative gain vs the measured β for several γ; markers with 95% bars: Monte Carlo, dashed: exact on Markov pairs (V = 4, order 1)."}
	gs := bvtTop(f, top, mc)
	bvtBottom(f, bot, rows, mc, gs)
	return f, nil
}

// bvtTop draws block-vs-token's top panel (emitted per step vs γ at three
// β) with its legend and the widest band's width in the caption, and
// returns the γ of the Monte Carlo rows.
func bvtTop(f *Figure, top *plot.Plot, mc []table.Row) []float64 {
	betas := table.Distinct(mc, "beta_target")
	var pick []float64 // none when every β is NaN: the panel stays empty
	if len(betas) > 0 {
		pick = []float64{betas[0], betas[len(betas)/2], betas[len(betas)-1]}
	}
	styles := [][]vg.Length{dotted, dashed, nil}
	for j, b := range slices.Compact(pick) {
		for _, rule := range []string{"token", "block"} {
			sub := table.Where(mc, table.And(table.Eq("rule", rule), func(r table.Row) bool { return table.Num(r, "beta_target") == b }))
			s := StyleOf(rule)
			top.Add(band(xy(sub, "gamma", "ci_lo"), xy(sub, "gamma", "ci_hi"), s.Color))
			l := line(xy(sub, "gamma", "mean_emitted"), s.Color, styles[j])
			m := marks(xy(sub, "gamma", "mean_emitted"), s.Color, s.Shape)
			top.Add(l, m)
		}
	}
	for _, rule := range []string{"token", "block"} {
		l, m := styled(nil, rule)
		f.AddLegend(rule, l, m)
	}
	for j, b := range slices.Compact(pick) {
		f.AddLegend(fmt.Sprintf("β = %g", b), line(nil, color.Black, styles[j]))
	}
	f.AddLegend("95% interval", bandLegend())
	gs := table.Distinct(mc, "gamma")
	intTicks(top, int(gs[0]), int(gs[len(gs)-1]), 1)
	padX(top, gs[0], gs[len(gs)-1])
	// the bands are drawn; say how wide they are, since at the default
	// trial counts most are thinner than a line
	half := 0.0
	for _, r := range table.Where(mc, func(r table.Row) bool { return r.String("rule") != "gain" }) {
		if w := (table.Num(r, "ci_hi") - table.Num(r, "ci_lo")) / 2; !math.IsNaN(w) {
			half = math.Max(half, w)
		}
	}
	f.Caption += fmt.Sprintf(" The widest 95%% band in the top panel is ±%.2g tokens, thin at the default trial counts; the bottom panel's bars show the paired intervals of the difference.", half)
	return gs
}

// bvtBottom draws block-vs-token's bottom panel: block's gain vs the
// measured β for γ = 2, 4, 8 (those of gs), Monte Carlo with bars and the
// exact rows of the first exact source dashed.
func bvtBottom(f *Figure, bot *plot.Plot, rows, mc []table.Row, gs []float64) {
	var gpick []float64
	for _, g := range []float64{2, 4, 8} {
		if slices.Contains(gs, g) {
			gpick = append(gpick, g)
		}
	}
	exact := table.Where(rows, table.And(table.Eq("kind", "exact"), table.Eq("rule", "gain")))
	src1 := ""
	if len(exact) > 0 {
		src1 = exact[0].String("source")
	}
	for i, g := range gpick {
		col := Seq(i, len(gpick))
		isG := func(r table.Row) bool { return table.Num(r, "gamma") == g }
		sub := table.Where(mc, table.And(table.Eq("rule", "gain"), isG))
		pts := xy(sub, "beta_measured", "gain_pct")
		if eb := gainBars(sub); eb != nil {
			eb.Color = col
			eb.CapWidth = vg.Points(3)
			bot.Add(eb)
		}
		l := line(pts, col, nil)
		m := marks(pts, col, StyleOf("block").Shape)
		bot.Add(l, m)
		ex := table.Where(exact, table.And(table.Eq("source", src1), isG))
		if len(ex) > 0 {
			bot.Add(line(xy(ex, "beta_measured", "gain_pct"), col, dashed))
		}
		f.AddLegendTo(1, fmt.Sprintf("γ = %g", g), l, m)
	}
	f.AddLegendTo(1, "Monte Carlo", line(nil, color.Black, nil), marks(nil, color.Black, StyleOf("block").Shape))
	if src1 != "" {
		f.AddLegendTo(1, "exact, Markov", line(nil, color.Black, dashed))
	}
	bot.Y.Min = math.Min(0, bot.Y.Min)
	if bs := table.Distinct(mc, "beta_measured"); len(bs) > 0 {
		padX(bot, bs[0], bs[len(bs)-1])
	}
}

// gainBars is the error bars of the gain rows sub: the gain's interval,
// scaled like gain_pct = 100·gain/token; nil when there are none.
func gainBars(sub []table.Row) *plotter.YErrorBars {
	var errs plotter.YErrors
	var pp plotter.XYs
	for _, r := range sub {
		m, lo, hi, gp := table.Num(r, "mean_emitted"), table.Num(r, "ci_lo"), table.Num(r, "ci_hi"), table.Num(r, "gain_pct")
		if m == 0 || math.IsNaN(gp) {
			continue
		}
		pp = append(pp, plotter.XY{X: table.Num(r, "beta_measured"), Y: gp})
		errs = append(errs, struct{ Low, High float64 }{gp - gp*lo/m, gp*hi/m - gp})
	}
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYer
		plotter.YErrorer
	}{pp, errs})
	if err != nil {
		return nil
	}
	return eb
}

// klZero is the KL(p‖π) below which a value is the round-off of an exact
// zero (a strict setting: π = p).
const klZero = 1e-12

// LossyFrontier draws lossy-frontier on one source as small multiples:
// one panel per lossy rule, its settings as markers (acceptance vs
// KL(p‖π) averaged over the contexts), under the frontier: the most
// acceptance any rule can average for an average KL budget (the rows of
// kind "frontier": mentored decoding with the budget allocated across
// contexts by water-filling). Settings that land on the same point are
// one marker labelled with their count, never jittered; KL = 0 has its
// own column left of the log axis, labelled 0.
func LossyFrontier(rows []table.Row, source string, V int, quality float64) (*Figure, error) {
	if err := need("lossy-frontier", rows, "source", "V", "quality", "rule", "acceptance", "kl"); err != nil {
		return nil, err
	}
	rows = table.Where(rows, func(r table.Row) bool {
		return r.String("source") == source && table.Num(r, "V") == float64(V) && math.Abs(table.Num(r, "quality")-quality) < 1e-12
	})
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: lossy-frontier has no rows for source %s, V = %d, quality %g", source, V, quality)
	}
	isFrontier := table.Eq("kind", "frontier")
	frontierRows := table.Where(rows, isFrontier)
	if len(frontierRows) == 0 {
		return nil, fmt.Errorf("plots: lossy-frontier has no frontier rows (kind = frontier) for source %s, V = %d, quality %g", source, V, quality)
	}
	ruleRows := table.Where(rows, func(r table.Row) bool { return !isFrontier(r) })
	ax := newKLAxes(ruleRows)
	// the frontier within the drawn range: KL = 0 in its column, then
	// from the break on (a budget between them has no place on the axis)
	frontier := table.Where(frontierRows, func(r table.Row) bool {
		kl := table.Num(r, "kl")
		return kl <= ax.xMax && (kl < klZero || kl >= ax.brk)
	})
	fpts := xyAt(frontier, ax.at)
	f := &Figure{Name: "lossy-frontier", LegendCols: 2, GridCols: 2, PanelHeight: 1.45 * vg.Inch,
		Caption: fmt.Sprintf("The lossy frontier on %s pools (V = %d, draft quality %g): one panel per lossy rule, acceptance vs KL(p‖π), both averaged over the pool's contexts, one marker per setting. "+
			"The black line is the frontier: the most acceptance any rule can average for that average KL, reached by mentored decoding with the KL budget allocated across the contexts where their acceptance–KL curves have one common slope (water-filling). "+
			"No setting lies above it. Mentored decoding with one D in every context (its own panel) lies on or below it. "+
			"A number beside a marker counts the settings that give that same point. KL = 0 (the strict settings, π = p) is the column left of the dotted break.", source, V, quality)}
	fl := line(fpts, color.Black, nil)
	f.AddLegend("frontier (water-filled mentored)", fl)
	var infinite []string
	rules := table.DistinctS(ruleRows, "rule")
	// mentored first: its panel shows how far one D everywhere is from
	// the frontier
	slices.SortStableFunc(rules, func(a, b string) int {
		return boolInt(b == "mentored") - boolInt(a == "mentored")
	})
	for _, rule := range rules {
		pts := xyAt(table.Where(ruleRows, func(r table.Row) bool {
			return r.String("rule") == rule && !math.IsInf(table.Num(r, "kl"), 1)
		}), ax.at)
		if len(pts) == 0 {
			infinite = append(infinite, rule)
			continue
		}
		p, err := ax.panel(rule, pts, fpts)
		if err != nil {
			return nil, err
		}
		f.Panels = append(f.Panels, p)
	}
	// axis labels once: x on the bottom row, y on the left column
	for i, p := range f.Panels {
		if i%2 == 1 {
			p.Y.Label.Text = ""
		}
		if i < len(f.Panels)-2 {
			p.X.Label.Text = ""
		}
	}
	if len(f.Panels) == 0 {
		return nil, fmt.Errorf("plots: lossy-frontier on %s has no lossy rule with a finite KL", source)
	}
	if len(infinite) > 0 {
		f.Caption += fmt.Sprintf(" Not drawn: %s, whose KL(p‖π) is infinite at every setting here (π is 0 where p > 0).", strings.Join(infinite, ", "))
	}
	return f, nil
}

// klAxes are lossy-frontier's common axes: the smallest positive KL of the
// rules fixes the first decade, and KL = 0 is drawn one decade and a half
// below it (zeroAt), left of a break at brk.
type klAxes struct {
	zeroAt, first, brk     float64
	xMin, xMax, yMin, yMax float64
	ticks                  klTicks
}

// newKLAxes sizes the common axes of the rules' rows.
func newKLAxes(ruleRows []table.Row) klAxes {
	minPos, maxKL, minAcc := math.Inf(1), 0.0, 1.0
	for _, q := range xy(ruleRows, "kl", "acceptance") {
		if q.X >= klZero {
			minPos = math.Min(minPos, q.X)
		}
		if !math.IsInf(q.X, 1) {
			maxKL = math.Max(maxKL, q.X)
		}
		minAcc = math.Min(minAcc, q.Y)
	}
	if math.IsInf(minPos, 1) {
		minPos = 1e-3
	}
	first := math.Pow(10, math.Floor(math.Log10(minPos)))
	zeroAt := first / math.Pow(10, 1.5)
	return klAxes{zeroAt: zeroAt, first: first, brk: math.Sqrt(zeroAt * first),
		xMin: zeroAt / 4, xMax: math.Max(maxKL, first) * 2,
		yMin: minAcc - padFrac*(1-minAcc), yMax: 1 + padFrac*(1-minAcc),
		ticks: klTicks{zero: zeroAt, first: first}}
}

// at is the x position of a KL: its own column for KL = 0.
func (ax klAxes) at(kl float64) float64 {
	if kl < klZero {
		return ax.zeroAt
	}
	return kl
}

// panel is one lossy rule's panel: the break, the frontier fpts and the
// rule's settings pts, one marker per distinct point labelled with its
// multiplicity.
func (ax klAxes) panel(rule string, pts, fpts plotter.XYs) (*plot.Plot, error) {
	p := newPanel("KL(p‖π) (nats)", "acceptance α")
	p.Title.Text = rule
	if rule == "mentored" {
		p.Title.Text = "mentored (one D everywhere)"
	}
	p.Title.Padding = vg.Points(2)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ax.ticks
	p.X.Tick.Label.Font.Size = klTickSize
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = ax.xMin, ax.xMax, ax.yMin, ax.yMax
	sep := line(plotter.XYs{{X: ax.brk, Y: ax.yMin}, {X: ax.brk, Y: ax.yMax}}, color.Gray{Y: 0x99}, dotted)
	sep.Width = vg.Points(0.6)
	l := line(fpts, color.Black, nil)
	l.Width = vg.Points(0.9)
	p.Add(sep, l)
	uniq, counts := coincide(pts)
	_, rm := styled(uniq, rule)
	rm.GlyphStyle.Radius = vg.Points(2.6)
	p.Add(rm)
	if err := ax.countLabels(p, rule, uniq, counts); err != nil {
		return nil, err
	}
	p.Y.Min, p.Y.Max, p.X.Min, p.X.Max = ax.yMin, ax.yMax, ax.xMin, ax.xMax
	return p, nil
}

// countLabels adds to p the count of every point of uniq that stands for
// more than one setting: above the marker, or below it in the upper half
// (a label reaching past the panel's edge would make gonum shrink the
// panel to fit it).
func (ax klAxes) countLabels(p *plot.Plot, rule string, uniq plotter.XYs, counts []int) error {
	var lab plotter.XYLabels
	for i, c := range counts {
		if c > 1 {
			lab.XYs = append(lab.XYs, uniq[i])
			lab.Labels = append(lab.Labels, fmt.Sprintf("×%d", c))
		}
	}
	if len(lab.XYs) == 0 {
		return nil
	}
	ls, err := plotter.NewLabels(lab)
	if err != nil {
		return err
	}
	for i := range ls.TextStyle {
		ls.TextStyle[i].Font.Size = tickSize
		ls.TextStyle[i].Color = StyleOf(rule).Color
		ls.TextStyle[i].XAlign = draw.XCenter
		ls.TextStyle[i].YAlign = draw.YBottom
		if lab.XYs[i].Y > (ax.yMin+ax.yMax)/2 {
			ls.TextStyle[i].YAlign = draw.YTop
		}
	}
	above, below := *ls, *ls
	above.XYs, below.XYs, above.Labels, below.Labels = nil, nil, nil, nil
	above.TextStyle, below.TextStyle = nil, nil
	for i := range ls.XYs {
		if ls.TextStyle[i].YAlign == draw.YTop {
			below.XYs, below.Labels, below.TextStyle = append(below.XYs, ls.XYs[i]), append(below.Labels, ls.Labels[i]), append(below.TextStyle, ls.TextStyle[i])
		} else {
			above.XYs, above.Labels, above.TextStyle = append(above.XYs, ls.XYs[i]), append(above.Labels, ls.Labels[i]), append(above.TextStyle, ls.TextStyle[i])
		}
	}
	above.Offset, below.Offset = vg.Point{Y: vg.Points(4)}, vg.Point{Y: -vg.Points(4)}
	for _, l := range []plotter.Labels{above, below} {
		if len(l.XYs) > 0 {
			p.Add(&l)
		}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// xyAt returns the (kl, acceptance) points of rows with x mapped by at
// (zero KL to its column).
func xyAt(rows []table.Row, at func(float64) float64) plotter.XYs {
	pts := xy(rows, "kl", "acceptance")
	for i := range pts {
		pts[i].X = at(pts[i].X)
	}
	return pts
}

// coincide merges points that agree to 1e-9 (relative in x, absolute in
// y) and counts how many settings each distinct point stands for.
func coincide(pts plotter.XYs) (plotter.XYs, []int) {
	var out plotter.XYs
	var n []int
next:
	for _, q := range pts {
		for i, o := range out {
			if math.Abs(o.X-q.X) <= 1e-9*math.Max(o.X, q.X) && math.Abs(o.Y-q.Y) <= 1e-9 {
				n[i]++
				continue next
			}
		}
		out = append(out, q)
		n = append(n, 1)
	}
	return out, n
}

// klTicks labels a log KL axis with a zero column: "0" at zero, then
// the decades from first on in one format (uniformLabels): every one when
// there are at most klLabelledDecades, every other one beyond (unlabelled
// ticks at the decades between), so the labels of a narrow panel do not
// run into each other.
type klTicks struct{ zero, first float64 }

// klLabelledDecades is the most decades a KL axis labels each of: with
// every other one of four labelled, a panel showed two labelled decades.
// The lossy frontier's narrow panels write them at klTickSize, where
// "0.001" fits within a decade.
const (
	klLabelledDecades = 5
	klTickSize        = font.Length(6)
)

// Ticks implements plot.Ticker.
func (k klTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := []plot.Tick{{Value: k.zero, Label: "0"}}
	n := 0
	for d := k.first; d <= hi; d *= 10 {
		n++
	}
	for i, d := 0, k.first; d <= hi; i, d = i+1, d*10 {
		t := plot.Tick{Value: d}
		if n <= klLabelledDecades || i%2 == 0 {
			t.Label = "-" // a placeholder: uniformLabels writes it
		}
		ts = append(ts, t)
	}
	uniformLabels(ts[1:], 6) // d is a product of tens: 1e-5·10 is 1.0000000000000002e-4
	return ts
}

// Multidraft draws multidraft on one pair: first-token acceptance vs the
// number of drafts k per verifier, with the optimal bounds for i.i.d. and
// without-replacement drafts. p and q, the pair's root rows, are written
// in the caption (nil: left out).
func Multidraft(rows []table.Row, pair string, p0, q0 []float64) (*Figure, error) {
	if err := need("multidraft", rows, "pair", "k", "verifier", "acceptance", "bound_iid", "bound_wor"); err != nil {
		return nil, err
	}
	rows = table.Where(rows, table.Eq("pair", pair))
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: multidraft has no rows for pair %q", pair)
	}
	p := newPanel("drafts k", "first-token acceptance")
	f := &Figure{Name: "multidraft", Panels: []*plot.Plot{p}, LegendCols: 3,
		Caption: fmt.Sprintf("Multi-draft verification on the %s pair%s: acceptance of a drafted first token vs the number of drafts k per verifier (exact), with the optimal acceptance α* for i.i.d. drafts and for drafts without replacement.", pair, rowsText(p0, q0))}
	first := rows[0].String("verifier")
	bi := table.Where(rows, table.Eq("verifier", first))
	for _, b := range []struct{ col, name string }{{"bound_iid", "bound-iid"}, {"bound_wor", "bound-wor"}} {
		s := StyleOf(b.name)
		l := line(xy(bi, "k", b.col), s.Color, s.Dashes)
		l.Width = vg.Points(1.4)
		p.Add(l)
		f.AddLegend(map[string]string{"bound-iid": "α* i.i.d.", "bound-wor": "α* w/o repl."}[b.name], l)
	}
	for _, v := range table.DistinctS(rows, "verifier") {
		sub := table.Where(rows, table.Eq("verifier", v))
		l, m := styled(xy(sub, "k", "acceptance"), v)
		p.Add(l, m)
		f.AddLegend(v, l, m)
	}
	// curves that reach acceptance 1 coincide there; say so, since the
	// later markers hide the earlier ones
	var full []string
	fromK := math.Inf(1)
	for _, v := range table.DistinctS(rows, "verifier") {
		for _, q := range xy(table.Where(rows, table.Eq("verifier", v)), "k", "acceptance") {
			if q.Y >= 1-1e-12 {
				full = append(full, v)
				fromK = math.Min(fromK, q.X)
				break
			}
		}
	}
	if len(full) > 1 {
		f.Caption += fmt.Sprintf(" %s reach acceptance 1 (the first at k = %g: their drafts then cover the whole support of p), and their curves coincide there.", strings.Join(full, ", "), fromK)
	}
	ks := table.Distinct(rows, "k")
	intTicks(p, int(ks[0]), int(ks[len(ks)-1]), 1)
	padX(p, ks[0], ks[len(ks)-1])
	// acceptance is at most 1; leave room for the markers drawn there
	p.Y.Max = 1 + padFrac*(1-p.Y.Min)
	return f, nil
}

// rowsText is " (p = (…), q = (…))" with 3 significant digits, or ""
// when p is nil.
func rowsText(p, q []float64) string {
	if p == nil {
		return ""
	}
	f := func(r []float64) string {
		parts := make([]string, len(r))
		for i, x := range r {
			parts[i] = strconv.FormatFloat(x, 'g', 3, 64)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return " (p = " + f(p) + ", q = " + f(q) + ")"
}

// Replay draws the replay of a log: small multiples of the histogram of
// the per-position acceptance α = Σ min(p_i, q_i), one panel per draft
// position, then the mean emitted tokens per step by rule (exact given the
// logged drafts, 95% intervals; the logged run sampled), the rules whose
// losslessness test rejects marked "lossy".
func Replay(rows []table.Row) (*Figure, error) {
	if err := need("replay", rows, "kind"); err != nil {
		return nil, err
	}
	alpha := table.Where(rows, table.Eq("kind", "alpha"))
	rules := table.Where(rows, table.Eq("kind", "rule"))
	if len(alpha) == 0 || len(rules) == 0 {
		return nil, fmt.Errorf("plots: replay needs rows of kind alpha and rule")
	}
	f := &Figure{Name: "replay", LegendCols: 4, PanelHeight: 1.3 * vg.Inch,
		Caption: "Replay of the embedded sample log. Top: one histogram per draft position of the acceptance α = Σ min(p, q) at that position (bins of 0.05; fraction of the steps that reach the position). Bottom: mean emitted tokens per step by rule, exact given each logged draft with 95% intervals (the logged run: its sampled mean); \"lossy\" marks the rules whose losslessness test on the log rejects."}
	positions, hists, yMax := alphaHists(alpha)
	for i, pos := range positions {
		p, err := alphaPanel(i, len(positions), pos, hists[i], yMax)
		if err != nil {
			return nil, err
		}
		f.Panels = append(f.Panels, p)
	}
	// histograms two per row, the rules' panel alone and taller below
	for n := len(positions); n > 0; n -= 2 {
		f.RowSizes = append(f.RowSizes, min(n, 2))
		f.RowHeights = append(f.RowHeights, f.PanelHeight)
	}
	f.RowSizes = append(f.RowSizes, 1)
	f.RowHeights = append(f.RowHeights, 0.22*vg.Inch*vg.Length(len(rules))+0.45*vg.Inch)
	f.Panels = append(f.Panels, replayRulesPanel(rules))
	return f, nil
}

// alphaBins is the number of bins of the replay figure's α histograms.
const alphaBins = 20

// alphaHists is the histogram of α at each draft position of the alpha
// rows (fractions of the position's steps) and the largest fraction.
func alphaHists(alpha []table.Row) (positions []float64, hists [][]float64, yMax float64) {
	positions = table.Distinct(alpha, "position")
	hists = make([][]float64, len(positions))
	for i, pos := range positions {
		sub := table.Where(alpha, func(r table.Row) bool { return table.Num(r, "position") == pos })
		hists[i] = make([]float64, alphaBins)
		for _, r := range sub {
			hists[i][min(alphaBins-1, max(0, int(table.Num(r, "alpha")*alphaBins)))]++
		}
		for b := range hists[i] {
			hists[i][b] /= float64(len(sub))
			yMax = math.Max(yMax, hists[i][b])
		}
	}
	return positions, hists, yMax
}

// alphaPanel is the histogram panel of position pos, the i-th of n, on a
// y axis up to yMax; x labels on the bottom row, y labels on the left.
func alphaPanel(i, n int, pos float64, hist []float64, yMax float64) (*plot.Plot, error) {
	p := newPanel("α at the position", "fraction")
	p.Title.Text = fmt.Sprintf("position %g", pos)
	p.Title.Padding = vg.Points(2)
	col := Seq(i, n)
	for b, v := range hist {
		if v == 0 {
			continue
		}
		x0, x1 := float64(b)/alphaBins, float64(b+1)/alphaBins
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: v}, {X: x0, Y: v}})
		if err != nil {
			return nil, err
		}
		poly.Color = col
		poly.LineStyle = draw.LineStyle{Color: color.White, Width: vg.Points(0.3)}
		p.Add(poly)
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, yMax*1.05
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"}})
	if i%2 == 1 {
		p.Y.Label.Text = ""
	}
	if i < n-2 {
		p.X.Label.Text = ""
	}
	return p, nil
}

// replayRulesPanel is the replay figure's bottom panel: every rule's mean
// emitted tokens per step (exact, else sampled) with its 95% interval.
func replayRulesPanel(rules []table.Row) *plot.Plot {
	bot := newPanel("E[emitted per step]", "")
	var names []string
	hiAll := 1.0
	for i, r := range rules {
		name := r.String("algorithm")
		label := name
		if r.String("lossless_verdict") == "violated" {
			label += " (lossy)"
		}
		names = append(names, label)
		y := float64(i)
		v, lo, hi := table.Num(r, "mean_emitted_exact"), table.Num(r, "ci_lo"), table.Num(r, "ci_hi")
		if math.IsNaN(v) {
			v, lo, hi = table.Num(r, "mean_emitted_sampled"), table.Num(r, "sampled_ci_lo"), table.Num(r, "sampled_ci_hi")
		}
		s := StyleOf(name)
		if name == "logged" {
			s = Style{Color: color.RGBA{0x55, 0x55, 0x55, 255}, Shape: draw.CrossGlyph{}}
		}
		hiAll = math.Max(hiAll, math.Max(v, hi))
		bot.Add(line(plotter.XYs{{X: lo, Y: y}, {X: hi, Y: y}}, s.Color, nil))
		m := marks(plotter.XYs{{X: v, Y: y}}, s.Color, s.Shape)
		m.GlyphStyle.Radius = vg.Points(2.8)
		bot.Add(m)
	}
	bot.NominalY(names...)
	bot.Y.Tick.Label.Font.Size = tickSize
	padX(bot, 1, hiAll)
	return bot
}

// cleanTicks relabels a Ticker's labelled ticks with at most four
// significant digits and no trailing zeros (25, not 25.00), all in one
// format (uniformLabels).
type cleanTicks struct{ plot.Ticker }

// Ticks implements plot.Ticker; a range that is not finite has no ticks
// (gonum's tick search never ends on a NaN range), and one whose width
// overflows (±1e308) gets the ticks of its halves, doubled.
func (c cleanTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo/2, hi/2) {
		return nil
	}
	var ts []plot.Tick
	if finiteRange(lo, hi) {
		ts = c.Ticker.Ticks(lo, hi)
	} else {
		ts = c.Ticker.Ticks(lo/2, hi/2)
		for i := range ts {
			ts[i].Value *= 2
		}
	}
	uniformLabels(ts, 4)
	return ts
}

// finiteRange reports whether [lo, hi] is a finite, ordered range of a
// finite width (hi - lo of ±1e308 overflows).
func finiteRange(lo, hi float64) bool {
	return !math.IsNaN(lo) && !math.IsNaN(hi) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && lo <= hi && !math.IsInf(hi-lo, 0)
}

// inRange drops the ticks a Ticker returns outside [min, max]: gonum pads
// the axis for their labels, which left a blank strip beside log axes.
type inRange struct{ plot.Ticker }

// Ticks implements plot.Ticker; a range that is not finite and positive
// has no ticks (gonum's log ticks panic below zero).
func (r inRange) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo, hi) || !(lo > 0) {
		return nil
	}
	var out []plot.Tick
	for _, t := range r.Ticker.Ticks(lo, hi) {
		if t.Value >= lo && t.Value <= hi {
			out = append(out, t)
		}
	}
	return out
}
