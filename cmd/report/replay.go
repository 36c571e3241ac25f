package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/data/samples"
	"github.com/specsim/specsim/experiments"
)

// ReplayExperiment is the name under which the replay of the embedded
// sample log is stored.
const ReplayExperiment = "replay"

// ReplayRules are the rules replayed over the sample log (default
// parameters).
var ReplayRules = []string{"token", "token-nobonus", "block", "exact-match", "greedy", "lenience", "mentored"}

// ReplayRows replays ReplayRules over the embedded sample log
// (data/samples, chargram.parquet) with data.Replay and returns two kinds
// of rows: kind = "alpha", one per (step, draft position) with
// α = Σ_x min(p_i(x), q_i(x)) of the logged rows; kind = "rule", one per
// rule (and "logged", the run as logged) with the mean emitted tokens per
// step (exact given each logged draft, and sampled) and the losslessness
// check of the first emitted token.
func ReplayRows(ctx context.Context, seed uint64, maxSteps int64) ([]experiments.Row, error) {
	open := func() (*data.Reader, error) {
		return data.NewReader(bytes.NewReader(samples.CharGram), int64(len(samples.CharGram)), data.ReadOptions{})
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	var rows []experiments.Row
	var n int64
	for r.Next() && (maxSteps <= 0 || n < maxSteps) {
		n++
		b := r.Block()
		for i := range b.Tokens {
			a := 0.0
			for x := range b.P[i].Len() {
				a += math.Min(b.P[i].At(x), b.Q[i].At(x))
			}
			rows = append(rows, experiments.Row{{K: "experiment", V: ReplayExperiment}, {K: "kind", V: "alpha"},
				{K: "row", V: r.Row()}, {K: "position", V: int64(i + 1)}, {K: "alpha", V: a}})
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	r.Close()
	var rules []experiments.ReplayRule
	for _, name := range ReplayRules {
		e, err := algos.Lookup(name)
		if err != nil {
			return nil, err
		}
		a, err := e.Build(nil)
		if err != nil {
			return nil, err
		}
		rules = append(rules, experiments.ReplayRule{Name: name, Algo: a, Greedy: e.Greedy})
	}
	if r, err = open(); err != nil {
		return nil, err
	}
	defer r.Close()
	rep, err := experiments.Replay(ctx, r, rules, experiments.ReplayConfig{Seed: seed, MaxSteps: maxSteps})
	if err != nil {
		return nil, err
	}
	rows = append(rows, experiments.Row{{K: "experiment", V: ReplayExperiment}, {K: "kind", V: "rule"},
		{K: "algorithm", V: "logged"}, {K: "steps", V: rep.LoggedSteps},
		{K: "mean_emitted_exact", V: math.NaN()}, {K: "ci_lo", V: math.NaN()}, {K: "ci_hi", V: math.NaN()},
		{K: "mean_emitted_sampled", V: rep.LoggedMeanEmitted}, {K: "sampled_ci_lo", V: rep.LoggedCI95[0]}, {K: "sampled_ci_hi", V: rep.LoggedCI95[1]},
		{K: "lossless_verdict", V: rep.LoggedLossless.Verdict}, {K: "lossless_p", V: rep.LoggedLossless.PValue},
		{K: "mean_alpha", V: rep.MeanAlpha}})
	for _, rr := range rep.Rules {
		rows = append(rows, experiments.Row{{K: "experiment", V: ReplayExperiment}, {K: "kind", V: "rule"},
			{K: "algorithm", V: rr.Name}, {K: "steps", V: rr.Steps},
			{K: "mean_emitted_exact", V: rr.MeanEmittedExact}, {K: "ci_lo", V: rr.EmittedExactCI95[0]}, {K: "ci_hi", V: rr.EmittedExactCI95[1]},
			{K: "mean_emitted_sampled", V: rr.MeanEmittedSampled}, {K: "sampled_ci_lo", V: rr.EmittedCI95[0]}, {K: "sampled_ci_hi", V: rr.EmittedCI95[1]},
			{K: "lossless_verdict", V: rr.Lossless.Verdict}, {K: "lossless_p", V: rr.Lossless.PValue},
			{K: "mean_alpha", V: rep.MeanAlpha}})
	}
	return rows, nil
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
func ReplayTable(rows []experiments.Row) Table {
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

func ci(r experiments.Row, lo, hi string, d int) string {
	a, b := col(r, lo, d), col(r, hi, d)
	if a == "–" && b == "–" {
		return "–"
	}
	return "[" + a + ", " + b + "]"
}
