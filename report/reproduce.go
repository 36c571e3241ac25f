package report

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/job"
	"github.com/specsim/specsim/table"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim"
)

// MainExperiments are the named experiments the main job runs, in order:
// the registered experiments that declare a Main position
// (experiments.MainJob), so a new experiment joins by declaring one.
var MainExperiments = mainNames()

func mainNames() []string {
	var out []string
	for _, e := range experiments.MainJob() {
		out = append(out, e.Name)
	}
	return out
}

// ScenarioExperiment is the name under which the fms scenarios are stored.
const ScenarioExperiment = "fms-scenarios"

// ScenarioAlgos are the tree rules run on each fms scenario: the biased
// naive scheme and the rules whose draft kind is a fixed candidate set.
var ScenarioAlgos = []string{"naive", "shared-uniform", "best-candidate", "target-only"}

// scenarioTrials is the default simulated steps per scenario and rule.
const scenarioTrials = 100000

// heartbeat is the longest silence of the progress log while cells run.
const heartbeat = 10 * time.Second

// DefaultSeed is the main job's master seed (a fixed seed, so the
// default report is the same on every machine at a commit).
const DefaultSeed = 1

// ReproduceOptions configures Reproduce.
type ReproduceOptions struct {
	Out         string
	Seed        uint64
	Scale       float64
	Workers     int
	Paper       bool
	Experiments []string
	// Log receives progress lines.
	Log io.Writer
}

// Reproduce is the main job.
func Reproduce(ctx context.Context, opt ReproduceOptions) error {
	start := time.Now()
	opt.Workers = sim.Workers(opt.Workers)
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(opt.Log, "[%6.1fs] "+format+"\n", append([]any{time.Since(start).Seconds()}, a...)...)
	}
	logf("reproduce: seed %d, scale %g, %d workers, output %s", opt.Seed, opt.Scale, opt.Workers, opt.Out)
	steps := len(opt.Experiments) + 2
	for i, name := range opt.Experiments {
		if name == ScenarioExperiment {
			continue
		}
		if err := runStored(ctx, filepath.Join(opt.Out, "runs", name), name, opt, func(s string) {
			logf("[%d/%d] %s: %s", i+1, steps, name, s)
		}); err != nil {
			return err
		}
	}
	logf("[%d/%d] %s: %d scenarios × %d rules, %d trials each", steps-1, steps, ScenarioExperiment, 2, len(ScenarioAlgos), int64(float64(scenarioTrials)*opt.Scale))
	if err := runScenarios(ctx, filepath.Join(opt.Out, "runs", ScenarioExperiment, "merged.parquet"), opt); err != nil {
		return err
	}
	logf("[%d/%d] %s: %d rules over the embedded sample log", steps, steps, ReplayExperiment, len(ReplayRules))
	if err := runReplay(ctx, filepath.Join(opt.Out, "runs", ReplayExperiment, "merged.parquet"), opt); err != nil {
		return err
	}
	logf("building figures and tables")
	b, err := LoadBundle(opt.Out)
	if err != nil {
		return err
	}
	files, err := Build(b, opt.Out)
	if err != nil {
		return err
	}
	logf("wrote %d files and %s", len(files), filepath.Join(opt.Out, "report.md"))
	var missing []string
	for _, name := range MainExperiments {
		if !b.Has(name) {
			missing = append(missing, name)
		}
	}
	if opt.Paper && len(missing) > 0 {
		logf("no paper: it needs every experiment, and %s has none of %v (run them all)", opt.Out, missing)
	} else if opt.Paper {
		pdir := filepath.Join(opt.Out, "paper")
		if err := WritePaper(b, pdir); err != nil {
			return err
		}
		if _, err := exec.LookPath("latexmk"); err != nil {
			logf("paper sources in %s; latexmk is not installed, so no PDF (apt-get install texlive-latex-base texlive-latex-recommended latexmk)", pdir)
		} else {
			logf("building the paper with latexmk")
			if err := BuildPDF(ctx, pdir); err != nil {
				return err
			}
			logf("wrote %s", filepath.Join(pdir, "paper.pdf"))
		}
	}
	logf("done in %s", time.Since(start).Round(time.Second))
	return nil
}

// runStored runs experiment name at its default grid as a sweep stored in
// dir (resuming stored cells), merges it into dir/merged.parquet.
func runStored(ctx context.Context, dir, name string, opt ReproduceOptions, progress func(string)) error {
	spec, err := experiments.DefaultSpec(name)
	if err != nil {
		return err
	}
	spec.Scale = opt.Scale
	plan, err := experiments.NewPlan(spec, opt.Seed)
	if err != nil {
		return err
	}
	store, err := experiments.OpenStore(dir, plan, experiments.All)
	if err != nil {
		return err
	}
	t0 := time.Now()
	total := len(plan.Cells)
	progress(fmt.Sprintf("%d cells", total))
	prog := job.NewProgressFunc(progress, int64(total), "cells", 3*time.Second)
	stopHB := prog.Heartbeat(ctx, heartbeat)
	defer stopHB()
	res, err := plan.Run(ctx, experiments.SweepOptions{Workers: opt.Workers, Store: store, Progress: func(s experiments.SweepProgress) {
		prog.Update(int64(s.Done+s.Skipped), int64(s.Total))
	}})
	stopHB()
	if err != nil {
		return err
	}
	t, _, err := experiments.MergeDir(dir)
	if err != nil {
		return err
	}
	if err := results.WriteFile(filepath.Join(dir, "merged.parquet"), t.Rows, t.Meta); err != nil {
		return err
	}
	progress(fmt.Sprintf("done: %d rows (%d cells computed, %d stored before) in %.1fs", len(t.Rows), res.Computed, res.Skipped, time.Since(t0).Seconds()))
	return nil
}

// runScenarios computes every fms scenario with every ScenarioAlgos rule
// (experiments.Scenario) and stores the rows as one merged table.
func runScenarios(ctx context.Context, path string, opt ReproduceOptions) error {
	trials := max(1, int64(float64(scenarioTrials)*opt.Scale))
	var rows []table.Row
	for _, name := range experiments.ScenarioNames() {
		for _, a := range ScenarioAlgos {
			r, err := experiments.Scenario(ctx, name, a, trials, opt.Seed, opt.Workers)
			if err != nil {
				return fmt.Errorf("scenario %s with %s: %w", name, a, err)
			}
			rows = append(rows, append(table.Row{{K: "experiment", V: ScenarioExperiment}}, r...))
		}
	}
	rev, gov := results.Provenance()
	meta := results.Meta{results.KeyKind: "merged", results.KeyExperiment: ScenarioExperiment,
		results.KeySeed: strconv.FormatUint(opt.Seed, 10), results.KeyCells: strconv.Itoa(len(rows)),
		results.KeyGitRevision: rev, results.KeyGoVersion: gov}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return results.WriteFile(path, rows, meta)
}

// Job is the 'report reproduce' command: it checks opt (a positive scale,
// workers ≥ 0, known experiment names; an empty list is MainExperiments),
// runs Reproduce and returns the path of report.md. Errors are marked with
// their kind (internal/diag): usage (bad options name their field:
// scale, workers, experiments), interrupted (finished cells kept) or I/O.
func Job(ctx context.Context, opt ReproduceOptions) (string, error) {
	if err := experiments.CheckScale("scale", opt.Scale); err != nil {
		return "", err
	}
	if opt.Workers < 0 {
		return "", diag.Param("workers", " = %d; use 0 (all cores) or more", opt.Workers)
	}
	if len(opt.Experiments) == 0 {
		opt.Experiments = MainExperiments
	}
	for _, n := range opt.Experiments {
		if n == ScenarioExperiment {
			continue
		}
		if _, err := experiments.Lookup(n); err != nil {
			return "", diag.Param("experiments", ": %w", err)
		}
	}
	err := Reproduce(ctx, opt)
	if err != nil && ctx.Err() != nil {
		return "", diag.Interrupted(fmt.Errorf("interrupted: %w; finished cells are kept, run the same command again to resume", err))
	}
	if err != nil {
		return "", diag.IO(err)
	}
	return filepath.Join(opt.Out, "report.md"), nil
}
