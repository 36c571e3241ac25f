package plots

import (
	"testing"

	"github.com/specsim/specsim/table"
)

func TestSeqFigures(t *testing.T) {
	var dr, dg []table.Row
	for _, d := range []string{"chain", "lookup", "tree"} {
		for g := int64(1); g <= 4; g++ {
			x := float64(g)
			dr = append(dr, table.Row{{K: "corpus", V: "code"}, {K: "cache", V: 0.8}, {K: "drafter", V: d}, {K: "gamma", V: g},
				{K: "tokens_per_call", V: 1 + x/4}, {K: "tokens_per_call_lo", V: 0.9 + x/4}, {K: "tokens_per_call_hi", V: 1.1 + x/4},
				{K: "speedup", V: 1 + x/5}, {K: "speedup_lo", V: 0.9 + x/5}, {K: "speedup_hi", V: 1.1 + x/5},
				{K: "leviathan_tokens", V: 1 + x/3}, {K: "leviathan_speedup", V: 1 + x/6}})
		}
	}
	for g := int64(1); g <= 8; g++ {
		dg = append(dg, table.Row{{K: "corpus", V: "code"}, {K: "c", V: 0.05}, {K: "policy", V: "fixed"}, {K: "gamma", V: g},
			{K: "speedup", V: 1.5}, {K: "speedup_lo", V: 1.4}, {K: "speedup_hi", V: 1.6}})
	}
	for _, p := range []string{"conf:0.3", "oracle"} {
		dg = append(dg, table.Row{{K: "corpus", V: "code"}, {K: "c", V: 0.05}, {K: "policy", V: p}, {K: "gamma", V: int64(8)},
			{K: "speedup", V: 1.7}, {K: "speedup_lo", V: 1.6}, {K: "speedup_hi", V: 1.8}})
	}
	f, err := Drafters(dr, "code", 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.LegendNames(); len(got) != 4 {
		t.Errorf("drafters legend %v, want chain, Leviathan, lookup, tree", got)
	}
	if _, err := f.Render("svg"); err != nil {
		t.Fatal(err)
	}
	g, err := DynamicGamma(dg, "code", 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.LegendNames(); len(got) != 3 {
		t.Errorf("dynamic-gamma legend %v, want fixed γ, conf:0.3, oracle", got)
	}
	if _, err := g.Render("svg"); err != nil {
		t.Fatal(err)
	}
	if _, err := Drafters(dr, "prose", 0.8); err == nil {
		t.Error("drafters for a corpus without rows: no error")
	}
	if _, err := DynamicGamma(dr, "code", 0.05); err == nil {
		t.Error("dynamic-gamma on the wrong rows: no error")
	}
}
