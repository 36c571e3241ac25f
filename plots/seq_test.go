package plots

import (
	"math"
	"testing"

	"github.com/specsim/specsim/table"
)

var nan = math.NaN()

// seqRows are drafters and dynamic-gamma rows over two settings each.
func seqRows() (dr, dg []table.Row) {
	for _, cache := range []float64{0, 0.8} {
		for _, d := range []string{"chain", "lookup", "tree"} {
			for g := int64(1); g <= 4; g++ {
				x := float64(g)
				lt, ls := 1+x/3, 1+x/6
				if d == "tree" {
					lt, ls = nan, nan // no chain β: n/a
				}
				dr = append(dr, table.Row{{K: "corpus", V: "code"}, {K: "cache", V: cache}, {K: "drafter", V: d}, {K: "gamma", V: g},
					{K: "tokens_per_call", V: 1 + x/4}, {K: "tokens_per_call_lo", V: 0.9 + x/4}, {K: "tokens_per_call_hi", V: 1.1 + x/4},
					{K: "speedup", V: 1 + x/5}, {K: "speedup_lo", V: 0.9 + x/5}, {K: "speedup_hi", V: 1.1 + x/5},
					{K: "leviathan_tokens", V: lt}, {K: "leviathan_speedup", V: ls}})
			}
		}
	}
	for _, c := range []float64{0.05, 0.2} {
		for g := int64(1); g <= 8; g++ {
			dg = append(dg, table.Row{{K: "corpus", V: "code"}, {K: "c", V: c}, {K: "policy", V: "fixed"}, {K: "gamma", V: g},
				{K: "speedup", V: 1.5}, {K: "speedup_lo", V: 1.4}, {K: "speedup_hi", V: 1.6}, {K: "drafted_per_call", V: float64(g)}})
		}
		for i, p := range []string{"conf:0.02", "conf:0.05", "conf:0.1", "conf:0.3", "oracle"} {
			dg = append(dg, table.Row{{K: "corpus", V: "code"}, {K: "c", V: c}, {K: "policy", V: p}, {K: "gamma", V: int64(8)},
				{K: "speedup", V: 1.7}, {K: "speedup_lo", V: 1.6}, {K: "speedup_hi", V: 1.8}, {K: "drafted_per_call", V: 2 + float64(i)/2}})
		}
	}
	return dr, dg
}

// The sequence figures draw every setting as its own panel, with their
// bands explained and their policies told apart.
func TestSeqFigures(t *testing.T) {
	dr, dg := seqRows()
	f, err := Drafters(dr)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.LegendNames(); len(got) != 5 {
		t.Errorf("drafters legend %v, want chain, Leviathan, lookup, tree and the band", got)
	}
	if len(f.Panels) != 4 || f.GridCols != 2 {
		t.Errorf("drafters: %d panels in %d columns, want 4 in 2 (two settings, two metrics)", len(f.Panels), f.GridCols)
	}
	g, err := DynamicGamma(dg)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.LegendNames(); len(got) != 7 {
		t.Errorf("dynamic-gamma legend %v, want fixed γ, four conf:τ, oracle and the band", got)
	}
	if len(g.Panels) != 2 {
		t.Errorf("dynamic-gamma: %d panels, want one per setting (2)", len(g.Panels))
	}
	for _, fig := range []*Figure{f, g} {
		for _, p := range fig.Problems() {
			t.Error(p)
		}
		if _, err := fig.Render("svg"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Drafters(nil); err == nil {
		t.Error("drafters without rows: no error")
	}
	if _, err := DynamicGamma(dr); err == nil {
		t.Error("dynamic-gamma on the wrong rows: no error")
	}
}
