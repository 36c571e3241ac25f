package experiments

import (
	"context"
	"testing"
)

// TestSMCSteering: the grid has every scheme once per K it supports on
// each model, and two cells (fc and the missing-N/N' mutant, 200 runs per
// N) give one row per N with fc keeping exactly N particles and the
// mutant's E[Ẑ]/Z interval far above 1 (it multiplies Ẑ by N'/N = 2 per
// resampling step).
func TestSMCSteering(t *testing.T) {
	t.Parallel()
	e, err := Lookup("smc-steering")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Seed: 3, Workers: 2, Scale: 0.1}
	cells, err := e.Cells(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// per model: fc ×3 K, fc-bisect ×2, is ×1, three baselines ×3, four mutants ×1
	if want := 3 * (3 + 2 + 1 + 9 + 4); len(cells) != want {
		t.Errorf("%d cells, want %d", len(cells), want)
	}
	for _, c := range []struct {
		scheme string
		check  func(r Row) bool
	}{
		{"fc", func(r Row) bool {
			n, _ := r.Float("n")
			lo, _ := r.Float("particles_min")
			hi, _ := r.Float("particles_max")
			return lo == n && hi == n
		}},
		{"mutant-no-factor", func(r Row) bool { lo, _ := r.Float("z_ratio_lo"); return lo > 1.5 }},
	} {
		cell := Cell{Key: []KV{{K: "model", V: "forbid+end+expert"}, {K: "scheme", V: c.scheme}, {K: "k", V: int64(2)}}}
		rows, err := e.Run(context.Background(), cfg, cell, CellSeed(cfg.Seed, e.Name, cell))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(smcSteeringN) {
			t.Fatalf("%s: %d rows, want %d", c.scheme, len(rows), len(smcSteeringN))
		}
		for _, r := range rows {
			if !c.check(r) {
				t.Errorf("%s: row %v", c.scheme, r)
			}
		}
	}
}
