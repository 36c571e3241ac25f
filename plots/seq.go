package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/specsim/specsim/table"
)

// drafterColors are the drafters' fixed colours (chain, heads, lookup,
// tree) in the order of seq.Drafters.
var drafterColors = map[string]color.RGBA{
	"chain":  {R: 0x00, G: 0x72, B: 0xb2, A: 255},
	"heads":  {R: 0xd5, G: 0x5e, B: 0x00, A: 255},
	"lookup": {R: 0x00, G: 0x9e, B: 0x73, A: 255},
	"tree":   {R: 0xcc, G: 0x79, B: 0xa7, A: 255},
}

func drafterColor(d string) color.RGBA {
	if c, ok := drafterColors[d]; ok {
		return c
	}
	return color.RGBA{A: 255}
}

// bandGrey is the colour of the legend's band swatch: the bands take
// their curve's colour, the swatch says what any band means.
var bandGrey = color.RGBA{0x80, 0x80, 0x80, 255}

// bandLegend is a legend swatch for a 95% band.
func bandLegend() *plotter.Polygon {
	return band(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}}, plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 1}}, bandGrey)
}

// setting is one (corpus, parameter) setting of a sequence experiment.
type setting struct {
	corpus string
	value  float64
}

// settingsOf returns the distinct (corpus, key) settings of rows in
// order of appearance.
func settingsOf(rows []table.Row, key string) []setting {
	var out []setting
	seen := map[setting]bool{}
	for _, r := range rows {
		s := setting{r.String("corpus"), table.Num(r, key)}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// yRange returns the least and greatest finite values of cols over rows,
// padded by padFrac of the span.
func yRange(rows []table.Row, cols ...string) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		for _, c := range cols {
			if v := table.Num(r, c); !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if lo > hi {
		return 0, 1
	}
	d := padFrac * math.Max(hi-lo, 1e-9)
	return lo - d, hi + d
}

// Drafters draws the drafters experiment as small multiples: one column
// per computed setting (corpus and target cache weight λ), tokens per
// target call (top row) and speedup (bottom row) vs γ for each drafter
// with 95% bands over prompts, and Leviathan's closed forms from the
// chain drafter's measured mean β (dashed). Rows of a metric share their
// y range, so the settings compare at a glance.
func Drafters(rows []table.Row) (*Figure, error) {
	if err := need("drafters", rows, "corpus", "cache", "drafter", "gamma", "tokens_per_call", "tokens_per_call_lo", "tokens_per_call_hi",
		"speedup", "speedup_lo", "speedup_hi", "leviathan_tokens", "leviathan_speedup"); err != nil {
		return nil, err
	}
	sets := settingsOf(rows, "cache")
	f := &Figure{Name: "drafters", Width: TextWidth, GridCols: len(sets), LegendCols: 6, PanelHeight: 1.7 * vg.Inch,
		Caption: "Whole generations per corpus and target cache weight λ (6-gram Kneser–Ney target, bigram draft, BPE V = 4096): tokens per target call (top) and speedup under the walltime model (bottom) vs γ for each drafter, with 95% intervals over prompts (shaded bands), and Leviathan et al.'s closed forms from the chain drafter's measured mean β (dashed). Where the markers leave the dashed line, acceptance is not i.i.d. along the sequence."}
	metrics := []struct{ y, lev, label string }{
		{"tokens_per_call", "leviathan_tokens", "tokens per target call"},
		{"speedup", "leviathan_speedup", "speedup (walltime model)"},
	}
	gs := table.Distinct(rows, "gamma")
	for mi, m := range metrics {
		yMin, yMax := yRange(rows, m.y+"_lo", m.y+"_hi", m.lev)
		for si, s := range sets {
			xl := ""
			if mi == len(metrics)-1 {
				xl = "draft length γ"
			}
			yl := ""
			if si == 0 {
				yl = m.label
			}
			p := newPanel(xl, yl)
			if mi == 0 {
				p.Title.Text = fmt.Sprintf("%s, λ = %g", s.corpus, s.value)
				p.Title.Padding = vg.Points(2)
			}
			sub := table.Where(rows, func(r table.Row) bool { return r.String("corpus") == s.corpus && table.Num(r, "cache") == s.value })
			for _, d := range table.DistinctS(sub, "drafter") {
				dr := table.Where(sub, table.Eq("drafter", d))
				c := drafterColor(d)
				l := line(xy(dr, "gamma", m.y), c, nil)
				mk := marks(xy(dr, "gamma", m.y), c, StyleOf("token").Shape)
				p.Add(band(xy(dr, "gamma", m.y+"_lo"), xy(dr, "gamma", m.y+"_hi"), c), l, mk)
				f.AddLegend(d, l, mk)
				if d == "chain" {
					lv := line(finite(xy(dr, "gamma", m.lev)), c, dashed)
					p.Add(lv)
					f.AddLegend("Leviathan (chain β)", lv)
				}
			}
			intTicks(p, int(gs[0]), int(gs[len(gs)-1]), 1)
			padX(p, gs[0], gs[len(gs)-1])
			p.Y.Min, p.Y.Max = yMin, yMax
			f.Panels = append(f.Panels, p)
		}
	}
	f.AddLegend("95% band", bandLegend())
	return f, nil
}

// finite drops the points whose y is NaN or infinite (n/a).
func finite(pts plotter.XYs) plotter.XYs {
	var out plotter.XYs
	for _, p := range pts {
		if !math.IsNaN(p.Y) && !math.IsInf(p.Y, 0) {
			out = append(out, p)
		}
	}
	return out
}

// policyStyles are the draft-length policies' colours and markers in
// dynamic-gamma (fixed γ takes the chain drafter's blue and circles).
var policyStyles = map[string]Style{
	"conf:0.02": {rgb(0xE69F00), triangle, nil},
	"conf:0.05": {rgb(0x009E73), square, nil},
	"conf:0.1":  {rgb(0xCC79A7), pyramid, nil},
	"conf:0.3":  {rgb(0x56B4E9), ring, nil},
	"oracle":    {rgb(0x000000), cross, nil},
}

// DynamicGamma draws dynamic-gamma as small multiples, one panel per
// computed setting (corpus and draft cost c): the speedup against the
// draft tokens actually spent per target call, fixed γ as a line with its
// 95% band over prompts, and each dynamic policy and the oracle as a
// marker with its 95% interval at the draft length it chose on average.
func DynamicGamma(rows []table.Row) (*Figure, error) {
	if err := need("dynamic-gamma", rows, "corpus", "c", "policy", "gamma", "speedup", "speedup_lo", "speedup_hi", "drafted_per_call"); err != nil {
		return nil, err
	}
	sets := settingsOf(rows, "c")
	f := &Figure{Name: "dynamic-gamma", GridCols: 2, LegendCols: 3, PanelHeight: 1.45 * vg.Inch,
		Caption: "Draft-length policies per corpus and draft cost c (token verification, chain drafter, target cache λ = 0.5): speedup under the walltime model against the draft tokens spent per target call (log scale). Fixed γ = 1..8: line with its 95% band over prompts; the confidence policies conf:τ (stop drafting after a token drafted with q < τ; cap γ = 8) and the oracle (charged only for the drafts that are accepted: an upper bound): markers with 95% intervals, at the mean draft length they chose."}
	yMin, yMax := yRange(rows, "speedup_lo", "speedup_hi")
	xMin, xMax := math.Inf(1), 0.0
	for _, r := range rows {
		if x := table.Num(r, "drafted_per_call"); x > 0 {
			xMin, xMax = math.Min(xMin, x), math.Max(xMax, x)
		}
	}
	if xMin > xMax {
		return nil, fmt.Errorf("plots: dynamic-gamma has no positive drafted_per_call")
	}
	blue := drafterColor("chain")
	for si, s := range sets {
		p := newPanel("", "")
		if si%2 == 0 {
			p.Y.Label.Text = "speedup (walltime)"
		}
		if si >= len(sets)-2 {
			p.X.Label.Text = "draft tokens per target call"
		}
		p.Title.Text = fmt.Sprintf("%s, c = %g", s.corpus, s.value)
		p.Title.Padding = vg.Points(2)
		sub := table.Where(rows, func(r table.Row) bool { return r.String("corpus") == s.corpus && table.Num(r, "c") == s.value })
		fixed := table.Where(sub, table.Eq("policy", "fixed"))
		l := line(xy(fixed, "drafted_per_call", "speedup"), blue, nil)
		m := marks(xy(fixed, "drafted_per_call", "speedup"), blue, StyleOf("token").Shape)
		p.Add(band(xy(fixed, "drafted_per_call", "speedup_lo"), xy(fixed, "drafted_per_call", "speedup_hi"), blue), l, m)
		f.AddLegend("fixed γ", l, m)
		for _, pol := range table.DistinctS(sub, "policy") {
			if pol == "fixed" {
				continue
			}
			st, ok := policyStyles[pol]
			if !ok {
				st = StyleOf(pol)
			}
			r := table.Where(sub, table.Eq("policy", pol))[0]
			pt := plotter.XYs{{X: table.Num(r, "drafted_per_call"), Y: table.Num(r, "speedup")}}
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYer
				plotter.YErrorer
			}{pt, plotter.YErrors{{Low: pt[0].Y - table.Num(r, "speedup_lo"), High: table.Num(r, "speedup_hi") - pt[0].Y}}})
			if err != nil {
				return nil, fmt.Errorf("plots: dynamic-gamma %s: %w", pol, err)
			}
			eb.Color, eb.CapWidth = st.Color, vg.Points(3)
			mk := marks(pt, st.Color, st.Shape)
			mk.GlyphStyle.Radius = vg.Points(2.8)
			p.Add(eb, mk)
			f.AddLegend(pol, mk)
		}
		// a log axis spreads the short draft lengths the policies choose
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.Min, p.X.Max = xMin/1.15, xMax*1.15
		p.Y.Min, p.Y.Max = yMin, yMax
		f.Panels = append(f.Panels, p)
	}
	f.AddLegend("95% band", bandLegend())
	return f, nil
}

// intTickList labels the integers lo, lo+step, ..., hi.
func intTickList(lo, hi, step int) []plot.Tick {
	var ts []plot.Tick
	for v := lo; v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	return ts
}
