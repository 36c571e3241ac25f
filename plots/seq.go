package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

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

// Drafters draws the drafters experiment on one corpus and target cache
// weight λ: tokens per target
// call (top) and speedup (bottom) vs γ for each drafter, with 95% bands
// over prompts, and Leviathan's closed forms from the chain drafter's
// measured mean β (dashed).
func Drafters(rows []table.Row, corpus string, cache float64) (*Figure, error) {
	if err := need("drafters", rows, "corpus", "cache", "drafter", "gamma", "tokens_per_call", "tokens_per_call_lo", "tokens_per_call_hi",
		"speedup", "speedup_lo", "speedup_hi", "leviathan_tokens", "leviathan_speedup"); err != nil {
		return nil, err
	}
	rows = table.Where(rows, func(r table.Row) bool { return r.String("corpus") == corpus && table.Num(r, "cache") == cache })
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: drafters has no rows for corpus %q and cache %g", corpus, cache)
	}
	top := newPanel("draft length γ (tokens)", "tokens per target call")
	bot := newPanel("draft length γ (tokens)", "speedup (walltime model)")
	f := &Figure{Name: fmt.Sprintf("drafters-%s-cache%g", corpus, cache), Panels: []*plot.Plot{top, bot}, LegendCols: 3,
		Caption: fmt.Sprintf("Whole generations on the %s corpus (6-gram KN target with cache weight λ = %g, bigram draft, BPE V = 4096): tokens per target call and speedup vs γ for each drafter, with 95%% intervals over prompts (bands), and Leviathan et al.'s closed forms from the chain drafter's measured mean β (dashed). Where the markers leave the dashed line, acceptance is not i.i.d. along the sequence.", corpus, cache)}
	for _, d := range table.DistinctS(rows, "drafter") {
		sub := table.Where(rows, table.Eq("drafter", d))
		c := drafterColor(d)
		for _, pn := range []struct {
			p      *plot.Plot
			y, lev string
		}{{top, "tokens_per_call", "leviathan_tokens"}, {bot, "speedup", "leviathan_speedup"}} {
			l := line(xy(sub, "gamma", pn.y), c, nil)
			m := marks(xy(sub, "gamma", pn.y), c, StyleOf("token").Shape)
			pn.p.Add(band(xy(sub, "gamma", pn.y+"_lo"), xy(sub, "gamma", pn.y+"_hi"), c), l, m)
			if pn.p == top {
				f.AddLegend(d, l, m)
			}
			if d == "chain" {
				lv := line(xy(sub, "gamma", pn.lev), c, dashed)
				pn.p.Add(lv)
				if pn.p == top {
					f.AddLegend("Leviathan (chain β)", lv)
				}
			}
		}
	}
	gs := table.Distinct(rows, "gamma")
	intTicks(top, int(gs[0]), int(gs[len(gs)-1]), 1)
	intTicks(bot, int(gs[0]), int(gs[len(gs)-1]), 1)
	return f, nil
}

// DynamicGamma draws one cell of dynamic-gamma: the speedup of fixed γ vs
// γ (line with 95% band), and each dynamic policy and the oracle as a
// horizontal line at its speedup.
func DynamicGamma(rows []table.Row, corpus string, c float64) (*Figure, error) {
	if err := need("dynamic-gamma", rows, "corpus", "c", "policy", "gamma", "speedup", "speedup_lo", "speedup_hi"); err != nil {
		return nil, err
	}
	rows = table.Where(rows, func(r table.Row) bool { return r.String("corpus") == corpus && table.Num(r, "c") == c })
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: dynamic-gamma has no rows for corpus %q and c = %g", corpus, c)
	}
	p := newPanel("draft length γ (tokens; the cap for the policies)", "speedup (walltime model)")
	f := &Figure{Name: fmt.Sprintf("dynamic-gamma-%s-c%g", corpus, c), Panels: []*plot.Plot{p}, LegendCols: 3,
		Caption: fmt.Sprintf("Draft length policies on the %s corpus with draft cost c = %g: speedup of fixed γ (line, 95%% band over prompts), of the confidence policies conf:τ and of the oracle (horizontal lines; cap γ = 8).", corpus, c)}
	fixed := table.Where(rows, table.Eq("policy", "fixed"))
	blue := drafterColor("chain")
	l := line(xy(fixed, "gamma", "speedup"), blue, nil)
	m := marks(xy(fixed, "gamma", "speedup"), blue, StyleOf("token").Shape)
	p.Add(band(xy(fixed, "gamma", "speedup_lo"), xy(fixed, "gamma", "speedup_hi"), blue), l, m)
	f.AddLegend("fixed γ", l, m)
	gs := table.Distinct(fixed, "gamma")
	lo, hi := gs[0], gs[len(gs)-1]
	others := table.Where(rows, func(r table.Row) bool { return r.String("policy") != "fixed" })
	pols := table.DistinctS(others, "policy")
	for i, pol := range pols {
		s := table.Num(table.Where(others, table.Eq("policy", pol))[0], "speedup")
		col := Seq(i, len(pols))
		dash := dotted
		if pol == "oracle" {
			col, dash = color.RGBA{A: 255}, dashed
		}
		h := line(plotter.XYs{{X: lo, Y: s}, {X: hi, Y: s}}, col, dash)
		p.Add(h)
		f.AddLegend(pol, h)
	}
	intTicks(p, int(lo), int(hi), 1)
	return f, nil
}
