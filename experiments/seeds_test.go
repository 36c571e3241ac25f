package experiments

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/specsim/specsim/table"
)

// TestSeeds runs the replicates at a fiftieth of the default trials:
// each has γ = 4's token, block and gain rows, the paired gain is block's
// mean less token's (to rounding), each replicate draws its own pool (the
// measured β differ, each near the target 0.6), a replicate's rows depend
// on its cell alone (rerunning one gives the same numbers), and the table
// and the paper's numbers agree on the replicates and their coverage.
func TestSeeds(t *testing.T) {
	e, err := Lookup("seeds")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Seed: 1, Scale: 0.02, Workers: 1}
	cells, err := e.Cells(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != seedsReplicates {
		t.Fatalf("%d cells, want %d", len(cells), seedsReplicates)
	}
	// the first few replicates (each builds its own V = 2048 pool, the
	// costly part); the table and numbers take any number of them
	const n = 4
	cells = cells[:n]
	var all []Row
	betas := map[float64]bool{}
	for i, c := range cells {
		rows, err := e.Run(context.Background(), cfg, c, CellSeed(cfg.Seed, e.Name, c))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 {
			t.Fatalf("replicate %d: %d rows, want 3 (token, block, gain)", i+1, len(rows))
		}
		by := map[string]Row{}
		for _, r := range rows {
			if g := num(t, r, "gamma"); g != seedsGamma {
				t.Errorf("replicate %d: γ = %g, want %d", i+1, g, seedsGamma)
			}
			if h, want := num(t, r, "ci_half"), (num(t, r, "ci_hi")-num(t, r, "ci_lo"))/2; h != want {
				t.Errorf("replicate %d %s: ci_half %g, want %g", i+1, r.String("rule"), h, want)
			}
			if se, h := num(t, r, "se"), num(t, r, "ci_half"); math.Abs(se*1.959963984540054-h) > 1e-12 {
				t.Errorf("replicate %d %s: se %g is not ci_half %g / z_0.975", i+1, r.String("rule"), se, h)
			}
			by[r.String("rule")] = r
		}
		d := num(t, by["block"], "mean_emitted") - num(t, by["token"], "mean_emitted")
		if g := num(t, by["gain"], "mean_emitted"); math.Abs(g-d) > 1e-12 {
			t.Errorf("replicate %d: paired gain %.15f, block − token %.15f", i+1, g, d)
		}
		b := num(t, by["gain"], "beta_measured")
		if math.Abs(b-seedsBeta) > 0.05 {
			t.Errorf("replicate %d: pool β %g, far from the target %g", i+1, b, seedsBeta)
		}
		betas[b] = true
		if i == 1 {
			again, err := e.Run(context.Background(), cfg, c, CellSeed(cfg.Seed, e.Name, c))
			if err != nil {
				t.Fatal(err)
			}
			for j := range again {
				if a, b := num(t, again[j], "mean_emitted"), num(t, rows[j], "mean_emitted"); a != b {
					t.Errorf("replicate 2 rerun: %s %g, first run %g", rows[j].String("rule"), a, b)
				}
			}
		}
		for j := range rows {
			rows[j] = append(Row{{K: "replicate", V: int64(i + 1)}}, rows[j]...)
		}
		all = append(all, rows...)
	}
	if len(betas) != n {
		t.Errorf("%d distinct pool β over %d replicates: the replicates share a pool", len(betas), n)
	}

	tab := seedsTable(all)
	if len(tab.Rows) != n+1 || tab.Rows[n][0] != "mean (SD)" {
		t.Fatalf("table rows %q", tab.Rows)
	}
	covered := 0
	for _, r := range tab.Rows[:n] {
		if r[6] == "✓" {
			covered++
		}
	}
	numbers := map[string]string{}
	for _, n := range e.Numbers {
		numbers[n.Macro] = n.Eval(all)
	}
	if numbers["SeedsN"] != strconv.Itoa(n) {
		t.Errorf("SeedsN = %s", numbers["SeedsN"])
	}
	if numbers["SeedsCovered"] != strconv.Itoa(covered) {
		t.Errorf("SeedsCovered = %s, the table ticks %d", numbers["SeedsCovered"], covered)
	}
	var gains []float64
	for _, r := range all {
		if r.String("rule") == "gain" {
			gains = append(gains, table.Num(r, "mean_emitted"))
		}
	}
	m, ss := 0.0, 0.0
	for _, g := range gains {
		m += g / float64(len(gains))
	}
	for _, g := range gains {
		ss += (g - m) * (g - m)
	}
	if want := table.Fixed(m, true, 3) + " (" + table.Fixed(math.Sqrt(ss/float64(len(gains)-1)), true, 3) + ")"; tab.Rows[n][4] != want {
		t.Errorf("table's mean (SD) %q, want %q", tab.Rows[n][4], want)
	}
	if numbers["SeedsGainMean"] != table.Fixed(m, true, 3) {
		t.Errorf("SeedsGainMean = %s, want %s", numbers["SeedsGainMean"], table.Fixed(m, true, 3))
	}
	t.Logf("numbers %v", numbers)
}
