package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/internal/job"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/table"
)

// RunOptions configures Execute: what 'simulate run' does with its flags.
type RunOptions struct {
	// Target is NAME|SPEC: an existing file or a *.toml argument is a
	// sweep spec, anything else a registered experiment's own grid.
	Target string
	// Seed is the master seed; 0 takes the spec's, then the seed recorded
	// in Out's manifest (so a resume needs no flag), then ClockSeed.
	Seed uint64
	// Scale, when ScaleSet or the spec has none, multiplies the default
	// trial counts (it must be positive).
	Scale    float64
	ScaleSet bool
	// Workers bounds the cells computed at once (0: all cores).
	Workers int
	// Shard "i/n" runs only the cells with index ≡ i mod n; empty reads
	// the environment (ShardFromEnv through Getenv, default os.Getenv).
	Shard  string
	Getenv func(string) string
	// Out, when set, stores each finished cell there (resumable).
	Out string
	// Log receives the header line, the progress and the closing line.
	Log io.Writer
	// ProgressEvery is the interval of plain progress lines.
	ProgressEvery time.Duration
	// ClockSeed gives a seed when no other source has one.
	ClockSeed func() uint64
	// MemBudget is the most bytes one source of a cell may take (0:
	// sim.DefaultMemBudget); the spec's sources are checked against it
	// before any cell runs.
	MemBudget int64
}

// RunSummary describes a stored run; it is the JSON form of 'simulate run
// --out'. Field names are stable.
type RunSummary struct {
	Experiment string  `json:"experiment"`
	SpecHash   string  `json:"spec_hash"`
	Seed       uint64  `json:"seed"`
	Shard      string  `json:"shard"`
	Cells      int     `json:"cells"`       // cells of the whole sweep
	ShardCells int     `json:"shard_cells"` // cells owned by this shard
	Computed   int     `json:"computed"`
	Skipped    int     `json:"skipped"`
	Out        string  `json:"out"`
	Seconds    float64 `json:"seconds"`
}

// RunReport is Execute's result: the summary, and without Out the rows
// (each with a final "seed" column).
type RunReport struct {
	Summary RunSummary
	Rows    []table.Row
}

// LoadTarget resolves NAME|SPEC (see RunOptions.Target); errors are usage
// errors.
func LoadTarget(arg string) (*Spec, error) {
	if _, err := os.Stat(arg); err == nil || strings.HasSuffix(arg, ".toml") {
		s, err := LoadSpec(arg)
		if err != nil {
			return nil, diag.Usage(err)
		}
		return s, nil
	}
	s, err := DefaultSpec(arg)
	if err != nil {
		return nil, diag.Usage(err)
	}
	return s, nil
}

// ResolveSeed picks the master seed: seed, then the spec's, then the seed
// recorded in out's manifest, then clock().
func ResolveSeed(seed uint64, spec *Spec, out string, clock func() uint64) (uint64, error) {
	if seed != 0 {
		return seed, nil
	}
	if spec.Seed != 0 {
		return spec.Seed, nil
	}
	if out != "" {
		m, ok, err := results.ReadManifest(out)
		if err != nil {
			return 0, diag.IO(err)
		}
		if ok {
			return m.Seed, nil
		}
	}
	if clock == nil {
		return uint64(time.Now().UnixNano()), nil
	}
	return clock(), nil
}

// ApplyScale sets spec's scale from the caller's scale (a command's
// --scale): when set, or when the spec has none (then scale is the
// caller's default).
func ApplyScale(spec *Spec, scale float64, set bool) error {
	if set || spec.Scale == 0 {
		spec.Scale = scale
		return experiments.CheckScale("scale", scale)
	}
	return experiments.CheckScale("the spec's scale", spec.Scale)
}

// Execute is 'simulate run': it resolves the spec, seed and shard, runs
// the sweep (storing and resuming cells under Out when set) and returns
// its report. Errors are marked with their kind (internal/diag): usage,
// I/O (a store or cell file) or interrupted (finished cells kept).
func Execute(ctx context.Context, o RunOptions) (RunReport, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	spec, shard, workers, err := runTarget(o)
	if err != nil {
		return RunReport{}, err
	}
	// Two locks guard --out. The shard's own lock is held for the whole
	// run, so a second run of the same shard fails at once; the directory
	// lock is held while the seed is read back and the manifest checked or
	// written, so concurrent shards (a Slurm array) see one manifest and a
	// run with another seed or spec is refused by OpenStore instead of
	// writing its cells under the first one's manifest.
	unlock, unlockManifest, err := lockOut(o.Out, shard)
	if err != nil {
		return RunReport{}, err
	}
	defer unlock()
	plan, seed, opt, err := openRun(o, spec, shard, workers, unlockManifest)
	if err != nil {
		return RunReport{}, err
	}
	owned := 0
	for i := range plan.Cells {
		if shard.Owns(i) {
			owned++
		}
	}
	prog := job.NewProgress(o.Log, "simulate", int64(owned), "cells", o.ProgressEvery)
	opt.Progress = func(s Progress) { prog.Update(int64(s.Done+s.Skipped), int64(s.Total)) }
	start := time.Now()
	res, err := plan.Run(ctx, opt)
	prog.Finish()
	sum := RunSummary{Experiment: plan.Exp.Name, SpecHash: spec.Hash(), Seed: seed, Shard: shard.String(), Cells: len(plan.Cells),
		ShardCells: owned, Computed: res.Computed, Skipped: res.Skipped, Out: o.Out, Seconds: time.Since(start).Seconds()}
	if err != nil {
		return RunReport{Summary: sum}, runError(ctx, err, o.Out, res, owned)
	}
	if o.Out != "" {
		fmt.Fprintf(o.Log, "simulate: shard %s done: %d cells computed, %d already stored, in %s\n", shard, res.Computed, res.Skipped, o.Out)
		return RunReport{Summary: sum}, nil
	}
	rows := res.Rows
	for i := range rows {
		rows[i] = append(rows[i], table.KV{K: "seed", V: int64(seed)})
	}
	if rows == nil {
		rows = []table.Row{}
	}
	return RunReport{Summary: sum, Rows: rows}, nil
}

// runTarget validates Execute's options: it loads the spec, checks its
// memory and scale, and resolves the workers and the shard (--shard, else
// the environment).
func runTarget(o RunOptions) (*Spec, Shard, int, error) {
	spec, err := LoadTarget(o.Target)
	if err != nil {
		return nil, Shard{}, 0, err
	}
	if err := spec.CheckMem(o.MemBudget); err != nil {
		return nil, Shard{}, 0, diag.Usage(err)
	}
	if err := ApplyScale(spec, o.Scale, o.ScaleSet); err != nil {
		return nil, Shard{}, 0, err
	}
	if o.Workers < 0 {
		return nil, Shard{}, 0, diag.Param("workers", " = %d; use 0 (all cores) or more", o.Workers)
	}
	workers := sim.Workers(o.Workers)
	var shard Shard
	if o.Shard != "" {
		shard, err = ParseShard(o.Shard)
	} else {
		getenv := o.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		shard, _, err = ShardFromEnv(getenv)
	}
	if err != nil {
		return nil, Shard{}, 0, diag.Usage(err)
	}
	return spec, shard, workers, nil
}

// lockOut takes the shard's lock and the directory lock of out (none
// when out is empty) and returns their releases.
func lockOut(out string, shard Shard) (unlock, unlockManifest func(), err error) {
	if out == "" {
		return func() {}, func() {}, nil
	}
	unlock, err = fsutil.Lock(out, fmt.Sprintf("%s-shard-%d-of-%d", fsutil.LockName, shard.I, shard.N), false)
	if err != nil {
		if diag.KindOf(err) != nil { // locked, or --out is no directory
			return nil, nil, err
		}
		return nil, nil, diag.IO(err)
	}
	if unlockManifest, err = fsutil.Lock(out, fsutil.LockName, true); err != nil {
		unlock()
		return nil, nil, diag.IO(err)
	}
	return unlock, unlockManifest, nil
}

// openRun resolves the seed, builds the plan and opens the store under
// o.Out, holding the directory lock (released by unlockManifest on
// return), and returns the plan, its seed and the run's options.
func openRun(o RunOptions, spec *Spec, shard Shard, workers int, unlockManifest func()) (*Plan, uint64, Options, error) {
	defer unlockManifest()
	seed, err := ResolveSeed(o.Seed, spec, o.Out, o.ClockSeed)
	if err != nil {
		return nil, 0, Options{}, err
	}
	plan, err := NewPlan(spec, seed)
	if err != nil {
		return nil, 0, Options{}, diag.Usage(err)
	}
	plan.Config.MemBudget = o.MemBudget
	opt := Options{Shard: shard, Workers: workers}
	if o.Out != "" {
		dir, err := OpenStore(o.Out, plan, shard)
		if err != nil {
			if diag.KindOf(err) != nil { // a link in --out leading outside it
				return nil, 0, Options{}, err
			}
			return nil, 0, Options{}, diag.IO(err)
		}
		opt.Store = dir
	}
	fmt.Fprintf(o.Log, "simulate: experiment %s, seed %d, spec %.12s, shard %s, %d cells, %d workers\n",
		plan.Exp.Name, seed, spec.Hash(), shard, len(plan.Cells), workers)
	return plan, seed, opt, nil
}

// runError marks the error of a sweep run with its kind: interrupted
// (saying what was kept in out, if anything), the kind it carries, or
// usage.
func runError(ctx context.Context, err error, out string, res Result, owned int) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		if out != "" {
			return diag.Interrupted(fmt.Errorf("interrupted: %d cells computed and kept in %s (%d were already there); run the same command again to compute the rest", res.Computed, out, res.Skipped))
		}
		return diag.Interrupted(fmt.Errorf("interrupted after %d of %d cells; nothing was stored (give an output directory to keep finished cells)", res.Computed, owned))
	}
	if diag.KindOf(err) != nil {
		return err
	}
	return diag.Usage(err)
}

// ShardCountEnv returns a getenv that answers EnvShardCount with n and
// everything else from os.Getenv (a --shard-count flag over the
// environment).
func ShardCountEnv(n int) func(string) string {
	return func(k string) string {
		if k == EnvShardCount {
			return strconv.Itoa(n)
		}
		return os.Getenv(k)
	}
}
