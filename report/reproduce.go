package report

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/job"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/experiments/sweep"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
)

// heartbeat is the longest silence of the progress log while cells run.
const heartbeat = 10 * time.Second

// DefaultSeed is the main job's master seed (a fixed seed, so the
// default report is the same on every machine at a commit).
const DefaultSeed = 1

// ReproduceOptions configures Reproduce.
type ReproduceOptions struct {
	Out     string
	Seed    uint64
	Scale   float64
	Workers int
	Paper   bool
	// Experiments are the registered experiments to compute, in order
	// (Job's default: MainExperiments).
	Experiments []string
	// Log receives progress lines.
	Log io.Writer
}

// Reproduce is the main job: it computes each of opt.Experiments into
// OUT/runs/NAME/merged.parquet (through the sweep runner, resuming stored
// cells, or in one piece where the experiment declares Whole), then builds
// the figures, tables and report.md from everything under OUT (Build)
// and, with opt.Paper and every main-job experiment present, the paper.
func Reproduce(ctx context.Context, opt ReproduceOptions) error {
	start, cpu0 := time.Now(), run.ProcessCPU()
	opt.Workers = sim.Workers(opt.Workers)
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(opt.Log, "[%6.1fs] "+format+"\n", append([]any{time.Since(start).Seconds()}, a...)...)
	}
	logf("reproduce: seed %d, scale %g, %d workers, output %s", opt.Seed, opt.Scale, opt.Workers, opt.Out)
	for i, name := range opt.Experiments {
		progress := func(s string) { logf("[%d/%d] %s: %s", i+1, len(opt.Experiments), name, s) }
		e, err := experiments.Lookup(name)
		if err != nil {
			return err
		}
		dir := filepath.Join(opt.Out, "runs", name)
		if e.Whole != nil {
			err = runWhole(ctx, dir, e, opt, progress)
		} else {
			err = runStored(ctx, dir, name, opt, progress)
		}
		if err != nil {
			return err
		}
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
		if err := WritePaper(b, pdir, true); err != nil {
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
			for _, p := range LayoutProblems(pdir) {
				logf("paper: %s", p)
			}
		}
	}
	if c := run.ProcessCPU(); c > 0 {
		// latexmk's CPU time is its own processes', not counted here
		logf("done in %s, %.1fs CPU in this process", time.Since(start).Round(time.Second), (c - cpu0).Seconds())
	} else {
		logf("done in %s", time.Since(start).Round(time.Second))
	}
	return nil
}

// runStored runs experiment name at its default grid as a sweep stored in
// dir (resuming stored cells), merges it into dir/merged.parquet.
func runStored(ctx context.Context, dir, name string, opt ReproduceOptions, progress func(string)) error {
	spec, err := sweep.DefaultSpec(name)
	if err != nil {
		return err
	}
	spec.Scale = opt.Scale
	plan, err := sweep.NewPlan(spec, opt.Seed)
	if err != nil {
		return err
	}
	store, err := sweep.OpenStore(dir, plan, sweep.All)
	if err != nil {
		return err
	}
	t0, c0 := time.Now(), run.ProcessCPU()
	total := len(plan.Cells)
	progress(fmt.Sprintf("%d cells", total))
	prog := job.NewProgressFunc(progress, int64(total), "cells", 3*time.Second)
	stopHB := prog.Heartbeat(ctx, heartbeat)
	defer stopHB()
	res, err := plan.Run(ctx, sweep.Options{Workers: opt.Workers, Store: store, Progress: func(s sweep.Progress) {
		prog.Update(int64(s.Done+s.Skipped), int64(s.Total))
	}})
	stopHB()
	if err != nil {
		return err
	}
	t, _, err := sweep.MergeDir(dir)
	if err != nil {
		return err
	}
	if err := results.WriteFile(filepath.Join(dir, "merged.parquet"), t.Rows, t.Meta); err != nil {
		return err
	}
	progress(fmt.Sprintf("done: %d rows (%d cells computed, %d stored before) in %s", len(t.Rows), res.Computed, res.Skipped, spent(t0, c0)))
	return nil
}

// spent is the wall-clock time since t0, "34.9s", and where the kernel
// reports it the CPU time the process has spent since c0 (a
// run.ProcessCPU reading), every worker included: "34.9s, 51.2s CPU".
// The experiments of the main job run one after another, so this is each
// experiment's share of the job's CPU time (docs/main-job.md).
func spent(t0 time.Time, c0 time.Duration) string {
	s := fmt.Sprintf("%.1fs", time.Since(t0).Seconds())
	if c := run.ProcessCPU(); c > 0 {
		s += fmt.Sprintf(", %.1fs CPU", (c - c0).Seconds())
	}
	return s
}

// runWhole computes experiment e in one piece (Experiment.Whole) and
// stores its rows as the merged table dir/merged.parquet.
func runWhole(ctx context.Context, dir string, e experiments.Experiment, opt ReproduceOptions, progress func(string)) error {
	t0, c0 := time.Now(), run.ProcessCPU()
	progress("computing its rows in one piece")
	rows, err := e.Whole(ctx, experiments.Config{Seed: opt.Seed, Scale: opt.Scale, Workers: opt.Workers})
	if err != nil {
		return fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	rev, gov := results.Provenance()
	meta := results.Meta{results.KeyKind: "merged", results.KeyExperiment: e.Name,
		results.KeySeed: strconv.FormatUint(opt.Seed, 10), results.KeyCells: "1",
		results.KeyGitRevision: rev, results.KeyGoVersion: gov}
	if err := fsutil.MkdirAll(dir); err != nil {
		return err
	}
	if err := results.WriteFile(filepath.Join(dir, "merged.parquet"), rows, meta); err != nil {
		return err
	}
	progress(fmt.Sprintf("done: %d rows in %s", len(rows), spent(t0, c0)))
	return nil
}

// Job is the 'report reproduce' command: it checks opt (a positive scale,
// workers ≥ 0, known experiment names; an empty list is MainExperiments),
// runs Reproduce and returns the path of report.md. Errors are marked with
// their kind (internal/diag): usage (bad options name their field:
// scale, workers, experiments; another reproduce holding the output
// directory's lock, fsutil.ErrLocked), interrupted (finished cells kept)
// or I/O.
func Job(ctx context.Context, opt ReproduceOptions) (string, error) {
	if err := experiments.CheckScale("scale", opt.Scale); err != nil {
		return "", err
	}
	if opt.Workers < 0 {
		return "", diag.Param("workers", " = %d; use 0 (all cores) or more", opt.Workers)
	}
	if err := fsutil.CheckOutputDir(opt.Out); err != nil {
		return "", diag.Param("out", ": %w", err)
	}
	// one reproduce per output directory: two would interleave their
	// merges, builds and paper in it
	unlock, err := fsutil.LockDir(opt.Out)
	if err != nil {
		return "", ioErr(err)
	}
	defer unlock()
	if len(opt.Experiments) == 0 {
		opt.Experiments = MainExperiments
	}
	for _, n := range opt.Experiments {
		if _, err := experiments.Lookup(n); err != nil {
			return "", diag.Param("experiments", ": %w", err)
		}
	}
	err = Reproduce(ctx, opt)
	if err != nil && ctx.Err() != nil {
		return "", diag.Interrupted(fmt.Errorf("interrupted: %w; finished cells are kept, run the same command again to resume", err))
	}
	if err != nil {
		return "", ioErr(err)
	}
	return filepath.Join(opt.Out, "report.md"), nil
}
