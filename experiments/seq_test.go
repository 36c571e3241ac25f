package experiments

import (
	"context"
	"math"
	"testing"
)

// TestSeqExperiments runs small cells of drafters and dynamic-gamma: the
// columns are there, lossless generations are preserved, Leviathan's Eq. 1
// at γ = 1 is 1 + β, and no policy beats the oracle.
func TestSeqExperiments(t *testing.T) {
	cfg := Config{Seed: 3, Scale: 0.4, Workers: 2}
	e, err := Lookup("drafters")
	if err != nil {
		t.Fatal(err)
	}
	cells, _ := e.Cells(cfg)
	if len(cells) != 2*2*4*4 {
		t.Fatalf("drafters has %d cells, want 64", len(cells))
	}
	for _, c := range []Cell{
		{Key: []KV{{K: "corpus", V: "prose"}, {K: "cache", V: 0.0}, {K: "drafter", V: "chain"}, {K: "gamma", V: int64(1)}}},
		{Key: []KV{{K: "corpus", V: "prose"}, {K: "cache", V: 0.8}, {K: "drafter", V: "lookup"}, {K: "gamma", V: int64(4)}}},
	} {
		rows, err := e.Run(context.Background(), cfg, c, CellSeed(cfg.Seed, e.Name, c))
		if err != nil {
			t.Fatal(err)
		}
		r := rows[0]
		if r.String("verdict") != "not_detected" {
			t.Errorf("%s: verdict %s", c.ID(), r.String("verdict"))
		}
		tpc, _ := r.Float("tokens_per_call")
		lo, _ := r.Float("tokens_per_call_lo")
		hi, _ := r.Float("tokens_per_call_hi")
		if !(lo <= tpc && tpc <= hi && tpc >= 1) {
			t.Errorf("%s: tokens per call %g outside [%g, %g] or below 1", c.ID(), tpc, lo, hi)
		}
		if c.Key[2].V == "chain" {
			b, _ := r.Float("mean_beta")
			lt, _ := r.Float("leviathan_tokens")
			if math.Abs(lt-(1+b)) > 1e-12 {
				t.Errorf("Eq. 1 at γ = 1: %g, want 1 + β = %g", lt, 1+b)
			}
		}
	}
	dg, err := Lookup("dynamic-gamma")
	if err != nil {
		t.Fatal(err)
	}
	c := Cell{Key: []KV{{K: "corpus", V: "prose"}, {K: "c", V: 0.2}}}
	rows, err := dg.Run(context.Background(), Config{Seed: 3, Scale: 0.3, Workers: 2}, c, 11)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != seqMaxGamma+len(DynamicGammaThresholds)+1 {
		t.Fatalf("dynamic-gamma cell has %d rows", len(rows))
	}
	for _, r := range rows {
		if r.String("exceeds_oracle") == "true" && r.String("policy") != "oracle" {
			t.Errorf("policy %s beats the oracle: %v", r.String("policy"), r)
		}
		if r.String("verdict") != "not_detected" {
			t.Errorf("policy %s: verdict %s", r.String("policy"), r.String("verdict"))
		}
	}
	best, _ := rows[0].Float("best_fixed_gamma")
	g, _ := rows[int(best)-1].Float("gain")
	if g != 0 {
		t.Errorf("the best fixed γ's gain over itself is %g, want 0", g)
	}
}
