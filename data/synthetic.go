package data

import (
	"context"
	"fmt"
	"os"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// ErrConfig marks errors in the configuration of a synthetic run (steps,
// sparsity, source spec, sampling, or a run the configuration cannot
// log), as opposed to I/O errors. It is a usage error (diag.ErrUsage).
var ErrConfig = diag.New(diag.ErrUsage, "invalid run configuration")

// SyntheticOptions configure LogSynthetic ('simulate log-synthetic').
type SyntheticOptions struct {
	// Source is a model pair or pool spec (source.New), Out the parquet
	// file, Sparse the top-k of sparse rows (0: dense).
	Source, Out string
	Sparse      int
	// MemBudget is the most bytes the source may take, and the budget
	// each step's rows are checked against (0: sim.DefaultMemBudget).
	MemBudget int64
	// Run is the logged run: steps, γ, prompts, seed (also the source's
	// seed where its spec gives none), run id, sampling, logits and rule.
	Run RunConfig
}

// SyntheticSummary is the JSON form of 'simulate log-synthetic'; field
// names are stable.
type SyntheticSummary struct {
	Out      string `json:"out"`
	Source   string `json:"source"`
	Seed     uint64 `json:"seed"`
	Steps    int64  `json:"steps"`
	Gamma    int    `json:"gamma"`
	V        int    `json:"V"`
	Layout   string `json:"layout"`
	RowKind  string `json:"row_kind"`
	Sampling string `json:"sampling"`
	Bytes    int64  `json:"bytes"`
}

// LogSynthetic builds the source, logs its run to opt.Out (LogRun for a
// model pair, LogPool for a pool) and summarises the file. Configuration
// errors match ErrConfig; a cancelled ctx gives ctx.Err(); other errors
// are I/O errors.
func LogSynthetic(ctx context.Context, opt SyntheticOptions) (*SyntheticSummary, error) {
	cfg := opt.Run
	if cfg.Steps < 1 {
		return nil, fmt.Errorf("%w: %w", ErrConfig, diag.Param("steps", " = %d; log at least one step", cfg.Steps))
	}
	if err := results.CheckOutput(opt.Out); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, diag.Param("out", ": %w", err))
	}
	if opt.Sparse < 0 {
		return nil, fmt.Errorf("%w: %w", ErrConfig, diag.Param("sparse", " = %d; use 0 (dense) or a positive count", opt.Sparse))
	}
	src, err := source.New(opt.Source, cfg.Gamma, cfg.Seed, opt.MemBudget)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	pair, isPair := sim.PairOf(src)
	pl, isPool := sim.PoolOf(src)
	if !isPair && !isPool {
		return nil, fmt.Errorf("%w: source %s is neither a model pair nor a pool; a synthetic log needs one of them", ErrConfig, src.Spec)
	}
	if err := cfg.Sampling.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	pv := BuildProvenance("simulate log-synthetic", src.Spec, cfg.Seed)
	pv.Extra = map[string]string{"command": fmt.Sprintf("log-synthetic --source %s --steps %d --gamma %d --sparse %d --logits=%v --steps-per-prompt %d --%s",
		src.Spec, cfg.Steps, cfg.Gamma, opt.Sparse, cfg.Logits, cfg.StepsPerPrompt, cfg.Sampling)}
	// The log is written to a temporary file and renamed into place only
	// when every step was written: an interrupted run (ctx cancelled,
	// SIGKILL, a full disk) leaves the previous file at opt.Out, or none.
	v, rows := 0, int64(0)
	var runErr error
	err = WriteLog(opt.Out, WriterOptions{Sparse: opt.Sparse, Provenance: pv, MemBudget: opt.MemBudget}, func(w *Writer) error {
		if isPair {
			v = pair.P.Vocab()
			runErr = LogRun(ctx, w, pair, src.Spec+"/p", src.Spec+"/q", cfg)
		} else {
			v = pl.V
			runErr = LogPool(ctx, w, pl, cfg)
		}
		rows = w.Rows()
		return runErr
	})
	if runErr != nil {
		switch {
		case ctx.Err() != nil, diag.KindOf(runErr) != nil:
			return nil, runErr
		case fsutil.IsIO(runErr): // a full disk while the rows stream out
			return nil, diag.IO(runErr)
		}
		return nil, fmt.Errorf("%w: %w", ErrConfig, runErr)
	}
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(opt.Out)
	if err != nil {
		return nil, err
	}
	out := &SyntheticSummary{Out: opt.Out, Source: src.Spec, Seed: cfg.Seed, Steps: rows, Gamma: cfg.Gamma, V: v,
		Layout: LayoutDense, RowKind: KindProbs, Sampling: cfg.Sampling.String(), Bytes: st.Size()}
	if opt.Sparse > 0 {
		out.Layout = LayoutSparse
	}
	if cfg.Logits {
		out.RowKind = KindLogits
	}
	return out, nil
}
