package experiments

import (
	"context"
	"fmt"
	"math"

	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// seeds repeats one Monte Carlo headline of the report under several
// seeds: block verification's gain over token verification at γ = 4 on
// a dirichlet:V=2048 pool of draft quality β = 0.6 (block-vs-token's
// cell), each replicate with its own pool (rows and calibration) and its
// own trials, both seeded from the master seed and the replicate. The
// spread of the replicates is the run-to-run variation the 95% intervals
// of one run claim to cover; the table sets one beside the other.
const (
	seedsReplicates = 20
	seedsBeta       = 0.6
	seedsGamma      = 4
)

func init() {
	Register(Experiment{
		Name:    "seeds",
		Main:    45,
		Section: "Several seeds",
		Summary: "block verification's gain over token verification at γ = 4, β = 0.6, under twenty seeds (pool and trials): replicates beside the intervals of each",
		Cells: func(Config) ([]Cell, error) {
			var cells []Cell
			for r := int64(1); r <= seedsReplicates; r++ {
				cells = append(cells, Cell{Key: []KV{{K: "replicate", V: r}}})
			}
			return cells, nil
		},
		Run:     runSeeds,
		Figures: []Figure{{Name: "seeds", Make: func(r []Row) (*plots.Figure, error) { return plots.Seeds(r, seedsGamma, seedsBeta) }}},
		Tables:  []Table{{Name: "seeds", Make: seedsTable}},
		Numbers: []table.Number{
			{Macro: "SeedsN", Agg: table.Count, Where: []string{"rule", "gain"}, Doc: "replicates"},
			{Macro: "SeedsGainMin", Where: []string{"rule", "gain"}, Agg: table.Min, Col: "gain_pct", Digits: 1, Doc: "the smallest replicate's gain %"},
			{Macro: "SeedsGainMax", Where: []string{"rule", "gain"}, Agg: table.Max, Col: "gain_pct", Digits: 1, Doc: "the largest replicate's gain %"},
			{Macro: "SeedsGainMean", Where: []string{"rule", "gain"}, Agg: table.Mean, Col: "mean_emitted", Digits: 3, Doc: "the replicates' mean gain (tokens per step)"},
			{Macro: "SeedsGainSD", Where: []string{"rule", "gain"}, Agg: table.SD, Col: "mean_emitted", Digits: 3, Doc: "their standard deviation"},
			{Macro: "SeedsHalfWidth", Where: []string{"rule", "gain"}, Agg: table.Mean, Col: "ci_half", Digits: 3, Doc: "the mean half-width of one replicate's 95% interval"},
			{Macro: "SeedsSE", Where: []string{"rule", "gain"}, Agg: table.Mean, Col: "se", Digits: 3, Doc: "the mean standard error one replicate states (half-width / Φ⁻¹(0.975))"},
			{Macro: "SeedsCovered", Where: []string{"rule", "gain"}, Agg: table.CoverMean, Col: "mean_emitted", Doc: "replicates whose 95% interval covers the replicates' mean"},
		},
	})
}

func runSeeds(ctx context.Context, cfg Config, c Cell, seed uint64) ([]Row, error) {
	r, err := cellFloat(c, "replicate")
	if err != nil {
		return nil, err
	}
	pl, err := bvtPool(seedsBeta, seedsGamma, sim.StreamID("seeds/pool", cfg.Seed, uint64(r)), cfg.MemBudget)
	if err != nil {
		return nil, err
	}
	rows, err := bvtMC(ctx, cfg, pl, seed, seedsGamma, seedsGamma)
	for i, row := range rows {
		half := (table.Num(row, "ci_hi") - table.Num(row, "ci_lo")) / 2
		rows[i] = append(row, KV{K: "ci_half", V: half}, KV{K: "se", V: half / (math.Sqrt2 * math.Erfinv(0.95))})
	}
	return rows, err
}

// seedsTable is the replicates of the gain at γ = 4 with their 95%
// intervals, then the replicates' mean and standard deviation: whether
// one run's interval is as wide as the runs' spread.
func seedsTable(rows []Row) table.Text {
	t := table.Text{Caption: fmt.Sprintf("Block verification's gain over token verification at γ = %d on a dirichlet:V=2048 pool of draft quality β = %g under %d seeds (each replicate its own pool and trials; 20000 paired steps each at scale 1): "+
		"emitted tokens per step with 95%% intervals, the gain, and whether the replicate's interval covers the replicates' mean; last, the mean and the standard deviation over the replicates.", seedsGamma, seedsBeta, seedsReplicates),
		Header: []string{"replicate", "β (measured)", "token", "block", "gain", "gain 95% CI", "covers the mean"}, Right: table.RightCols(7, 0, 1, 2, 3, 4)}
	byRep := map[string]map[string]Row{}
	var reps []string
	var gains stattest.Moments
	for _, r := range rows {
		rep := r.String("replicate")
		if byRep[rep] == nil {
			byRep[rep] = map[string]Row{}
			reps = append(reps, rep)
		}
		byRep[rep][r.String("rule")] = r
		if r.String("rule") == "gain" {
			gains.Add(table.Num(r, "mean_emitted"))
		}
	}
	s := gains.Summary(0.95)
	for _, rep := range reps {
		m := byRep[rep]
		g := m["gain"]
		covers := NA
		if g != nil {
			covers = "✗"
			if lo, hi := table.Num(g, "ci_lo"), table.Num(g, "ci_hi"); lo <= s.Mean && s.Mean <= hi {
				covers = "✓"
			}
		}
		t.Rows = append(t.Rows, []string{rep, dec(g, "beta_measured", 3), bracketed(m["token"], 3), bracketed(m["block"], 3),
			dec(g, "mean_emitted", 3), bracket(g, "ci_lo", "ci_hi", 3), covers})
	}
	sd := math.NaN()
	if s.N > 1 {
		sd = s.StdDev
	}
	t.Rows = append(t.Rows, []string{"mean (SD)", NA, NA, NA, table.Fixed(s.Mean, s.N > 0, 3) + " (" + table.Fixed(sd, true, 3) + ")", NA, NA})
	return t
}

// bracketed is a mean with its 95% interval: "1.234 [1.2, 1.3]".
func bracketed(r Row, d int) string {
	if r == nil {
		return NA
	}
	return dec(r, "mean_emitted", d) + " " + bracket(r, "ci_lo", "ci_hi", d)
}
