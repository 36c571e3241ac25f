package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
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

// band is a filled confidence band between lo and hi (same x).
func band(lo, hi plotter.XYs, c color.RGBA) *plotter.Polygon {
	var pts plotter.XYs
	pts = append(pts, lo...)
	for i := len(hi) - 1; i >= 0; i-- {
		pts = append(pts, hi[i])
	}
	poly, _ := plotter.NewPolygon(pts)
	poly.Color = color.NRGBA{c.R, c.G, c.B, 70} // not RGBA: that one is premultiplied
	poly.LineStyle.Width = 0
	return poly
}

// styled returns a line and markers in the algorithm's fixed style.
func styled(pts plotter.XYs, name string) (*plotter.Line, *plotter.Scatter) {
	s := StyleOf(name)
	return line(pts, s.Color, s.Dashes), marks(pts, s.Color, s.Shape)
}

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
	p := newPanel("draft length γ (tokens)", "E[tokens per step] (tokens)")
	f := &Figure{Name: "leviathan-tokens", Panels: []*plot.Plot{p}, LegendCols: 3,
		Caption: "Expected tokens per step vs γ: Leviathan et al.'s Eq. 1 (1−α^(γ+1))/(1−α) (lines) and the exact engine's token verification on a constant-β pair (markers)."}
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
	p := newPanel("draft length γ (tokens)", "walltime improvement (×)")
	f := &Figure{Name: "leviathan-walltime", Panels: []*plot.Plot{p}, LegendCols: 3,
		Caption: fmt.Sprintf("Walltime improvement (1−α^(γ+1))/((1−α)(γc+1)) (Leviathan et al. Thm 3.8) vs γ at α = %g for several cost ratios c; filled markers: the best γ.", alpha)}
	cs := table.Distinct(rows, "c")
	for i, c := range cs {
		sub := table.Where(rows, func(r table.Row) bool { return table.Num(r, "c") == c })
		col := Seq(i, len(cs))
		l := line(xy(sub, "gamma", "walltime"), col, nil)
		best := table.Where(sub, table.Eq("is_best", "true"))
		m := marks(xy(best, "gamma", "walltime"), col, draw.CircleGlyph{})
		m.GlyphStyle.Radius = vg.Points(3.2)
		p.Add(l, m)
		f.AddLegend(fmt.Sprintf("c = %g", c), l)
	}
	f.AddLegend("best γ", marks(nil, color.Black, draw.CircleGlyph{}))
	gs := table.Distinct(rows, "gamma")
	intTicks(p, 0, int(gs[len(gs)-1]), 2)
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
	top := newPanel("draft length γ (tokens)", "E[emitted per step] (tokens)")
	bot := newPanel("draft quality β = Σ min(p, q)", "block gain over token (%)")
	f := &Figure{Name: "block-vs-token", Panels: []*plot.Plot{top, bot}, LegendCols: 3, PanelHeight: 2 * vg.Inch,
		Caption: "Block vs token verification. Top: emitted tokens per step vs γ, paired Monte Carlo on dirichlet:V=2048 pools at three draft qualities β (line style), 95% bands. Bottom: block's relative gain vs the measured β for several γ; markers with 95% bars: Monte Carlo, dashed: exact on Markov pairs (V = 4, order 1)."}
	betas := table.Distinct(mc, "beta_target")
	pick := []float64{betas[0], betas[len(betas)/2], betas[len(betas)-1]}
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
	gs := table.Distinct(mc, "gamma")
	intTicks(top, int(gs[0]), int(gs[len(gs)-1]), 1)

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
		var errs plotter.YErrors
		var pp plotter.XYs
		for _, r := range sub {
			m, lo, hi, gp := table.Num(r, "mean_emitted"), table.Num(r, "ci_lo"), table.Num(r, "ci_hi"), table.Num(r, "gain_pct")
			if m == 0 || math.IsNaN(gp) {
				continue
			}
			// the gain's interval, scaled like gain_pct = 100·gain/token
			pp = append(pp, plotter.XY{X: table.Num(r, "beta_measured"), Y: gp})
			errs = append(errs, struct{ Low, High float64 }{gp - gp*lo/m, gp*hi/m - gp})
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pp, errs})
		if err == nil {
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
	return f, nil
}

// KLFloor is where zero KL(p‖π) is drawn on the log axis of LossyFrontier.
const KLFloor = 1e-4

// LossyFrontier draws lossy-frontier on one source: acceptance vs
// KL(p‖π) for every lossy rule and parameter value; mentored decoding is
// the frontier (the most acceptance for a KL budget).
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
	// a short axis label: gonum shortens the axis to fit a long one
	p := newPanel("KL(p‖π) (nats per token)", "acceptance α (per position)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
	f := &Figure{Name: "lossy-frontier", Panels: []*plot.Plot{p}, LegendCols: 3, PanelHeight: 2.4 * vg.Inch,
		Caption: fmt.Sprintf("The lossy frontier on %s pools (V = %d, draft quality %g): acceptance vs KL(p‖π) of the emitted token's law, one marker per setting of each lossy rule; mentored decoding (black curve over its budget D) is the most acceptance any rule gets for a KL budget. KL = 0 (the strict settings) is drawn at %g on the log axis.", source, V, quality, KLFloor)}
	var infinite []string
	for _, rule := range table.DistinctS(rows, "rule") {
		sub := table.Where(rows, table.Eq("rule", rule))
		var pts plotter.XYs
		for _, q := range xy(sub, "kl", "acceptance") {
			pts = append(pts, plotter.XY{X: math.Max(q.X, KLFloor), Y: q.Y})
		}
		if len(pts) == 0 {
			infinite = append(infinite, rule)
			continue
		}
		l, m := styled(pts, rule)
		if rule == "mentored" {
			// the frontier: a curve over its KL budget D
			p.Add(l, m)
			f.AddLegend(rule+" (frontier)", l, m)
			continue
		}
		// other rules: markers only, so no segment suggests values between
		// settings
		p.Add(m)
		f.AddLegend(rule, m)
	}
	if len(infinite) > 0 {
		f.Caption += fmt.Sprintf(" Not drawn: %s, whose KL(p‖π) is infinite at every setting here (π is 0 where p > 0).", strings.Join(infinite, ", "))
	}
	p.X.Min = KLFloor / 1.5
	return f, nil
}

// Multidraft draws multidraft on one pair: first-token acceptance vs the
// number of drafts k per verifier, with the optimal bounds for i.i.d. and
// without-replacement drafts.
func Multidraft(rows []table.Row, pair string) (*Figure, error) {
	if err := need("multidraft", rows, "pair", "k", "verifier", "acceptance", "bound_iid", "bound_wor"); err != nil {
		return nil, err
	}
	rows = table.Where(rows, table.Eq("pair", pair))
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: multidraft has no rows for pair %q", pair)
	}
	p := newPanel("drafts k", "first-token acceptance")
	f := &Figure{Name: "multidraft", Panels: []*plot.Plot{p}, LegendCols: 3,
		Caption: fmt.Sprintf("Multi-draft verification on the %s pair: acceptance of a drafted first token vs the number of drafts k per verifier (exact), with the optimal acceptance α* for i.i.d. drafts and for drafts without replacement.", pair)}
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
	ks := table.Distinct(rows, "k")
	intTicks(p, int(ks[0]), int(ks[len(ks)-1]), 1)
	p.Y.Max = 1.0
	return f, nil
}

// Replay draws the replay of a log in two panels: the histogram of the
// per-step acceptance α = Σ min(p_i, q_i) at each draft position, and the
// mean emitted tokens per step by rule (exact given the logged drafts, 95%
// intervals; the logged run sampled).
func Replay(rows []table.Row) (*Figure, error) {
	if err := need("replay", rows, "kind"); err != nil {
		return nil, err
	}
	alpha := table.Where(rows, table.Eq("kind", "alpha"))
	rules := table.Where(rows, table.Eq("kind", "rule"))
	if len(alpha) == 0 || len(rules) == 0 {
		return nil, fmt.Errorf("plots: replay needs rows of kind alpha and rule")
	}
	top := newPanel("acceptance α = Σ min(p, q) of one step", "fraction of steps")
	bot := newPanel("E[emitted per step] (tokens)", "")
	f := &Figure{Name: "replay", Panels: []*plot.Plot{top, bot}, LegendCols: 4, PanelHeight: 2 * vg.Inch,
		Caption: "Replay of the embedded sample log. Top: histogram of the per-step acceptance α at each draft position (bins of 0.05). Bottom: mean emitted tokens per step by rule, exact given each logged draft with 95% intervals (the logged run: its sampled mean)."}
	const bins = 20
	positions := table.Distinct(alpha, "position")
	for i, pos := range positions {
		sub := table.Where(alpha, func(r table.Row) bool { return table.Num(r, "position") == pos })
		counts := make([]float64, bins)
		for _, r := range sub {
			counts[min(bins-1, max(0, int(table.Num(r, "alpha")*bins)))]++
		}
		// a step outline: each bin as a flat segment
		var pts plotter.XYs
		for b, c := range counts {
			y := c / float64(len(sub))
			pts = append(pts, plotter.XY{X: float64(b) / bins, Y: y}, plotter.XY{X: float64(b+1) / bins, Y: y})
		}
		l := line(pts, Seq(i, len(positions)), nil)
		top.Add(l)
		f.AddLegendTo(0, fmt.Sprintf("position %g", pos), l)
	}
	top.X.Min, top.X.Max, top.Y.Min = 0, 1, 0
	var names []string
	hiAll := 1.0
	for i, r := range rules {
		name := r.String("algorithm")
		names = append(names, name)
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
	bot.X.Min, bot.X.Max = 1, hiAll+0.05*(hiAll-1)
	return f, nil
}

// inRange drops the ticks a Ticker returns outside [min, max]: gonum pads
// the axis for their labels, which left a blank strip beside log axes.
type inRange struct{ plot.Ticker }

// Ticks implements plot.Ticker.
func (r inRange) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range r.Ticker.Ticks(lo, hi) {
		if t.Value >= lo && t.Value <= hi {
			out = append(out, t)
		}
	}
	return out
}
