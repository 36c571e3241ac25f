package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/table"
)

// ReplayExperiment is the name under which the replay of the embedded
// sample log is stored.
const ReplayExperiment = "replay"

// ReplayRules are the rules replayed over the sample log (default
// parameters).
var ReplayRules = experiments.ReplaySampleRules

// ReplayRows replays ReplayRules over the embedded sample log
// (data/samples, chargram.parquet) with experiments.Replay and returns two kinds
// of rows: kind = "alpha", one per (step, draft position) with
// α = Σ_x min(p_i(x), q_i(x)) of the logged rows; kind = "rule", one per
// rule (and "logged", the run as logged) with the mean emitted tokens per
// step (exact given each logged draft, and sampled) and the losslessness
// check of the first emitted token.
func ReplayRows(ctx context.Context, seed uint64, maxSteps int64) ([]table.Row, error) {
	return experiments.ReplaySampleRows(ctx, seed, maxSteps)
}

// runReplay stores ReplayRows as one merged table at path.
func runReplay(ctx context.Context, path string, opt ReproduceOptions) error {
	rows, err := ReplayRows(ctx, opt.Seed, 0)
	if err != nil {
		return fmt.Errorf("replay of the sample log: %w", err)
	}
	rev, gov := results.Provenance()
	meta := results.Meta{results.KeyKind: "merged", results.KeyExperiment: ReplayExperiment,
		results.KeySeed: strconv.FormatUint(opt.Seed, 10), results.KeyCells: "1",
		results.KeyGitRevision: rev, results.KeyGoVersion: gov}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return results.WriteFile(path, rows, meta)
}

// ReplayTable is the replay's per-rule summary.
func ReplayTable(rows []table.Row) Table {
	t := Table{Name: ReplayExperiment, Caption: "Replay of the embedded sample log (data/samples/chargram.parquet): emitted tokens per step by rule, exact given each logged draft and sampled (95% CIs), and the χ² losslessness check of the first emitted token (lossy rules are expected to fail it).",
		Header: []string{"rule", "steps", "E[emitted] exact", "95% CI", "sampled", "95% CI", "first token", "p-value"}, Right: rightCols(8, 1, 2, 4, 7)}
	for _, r := range rows {
		if r.String("kind") != "rule" {
			continue
		}
		t.Rows = append(t.Rows, []string{r.String("algorithm"), col(r, "steps", 0), col(r, "mean_emitted_exact", 3),
			ci(r, "ci_lo", "ci_hi", 3), col(r, "mean_emitted_sampled", 3), ci(r, "sampled_ci_lo", "sampled_ci_hi", 3),
			r.String("lossless_verdict"), col(r, "lossless_p", 3)})
	}
	return t
}

func ci(r table.Row, lo, hi string, d int) string {
	a, b := col(r, lo, d), col(r, hi, d)
	if a == "–" && b == "–" {
		return "–"
	}
	return "[" + a + ", " + b + "]"
}
