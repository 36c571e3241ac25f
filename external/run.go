package external

import (
	"context"
	"fmt"
	"time"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// RunConfig is a whole external check: the implementation and the
// statistical check's settings.
type RunConfig struct {
	Config
	Check CheckConfig
}

// Report is the result of Run: check.Result for the implementation, with
// the edge-case verdict folded into Verdict (violated if either is).
type Report struct {
	Implementation string    `json:"implementation"`
	Command        string    `json:"command"`
	Mode           string    `json:"mode"`
	Source         string    `json:"source"`
	Gamma          int       `json:"gamma"`
	Batch          int       `json:"batch"`
	Sampling       *Sampling `json:"sampling,omitempty"`
	check.Result
	// StatVerdict is the statistical tests' verdict alone.
	StatVerdict string  `json:"statistical_verdict"`
	Edge        string  `json:"edge_verdict"`
	EdgeMsg     string  `json:"edge_message,omitempty"`
	Elapsed     float64 `json:"elapsed_seconds"`
	// StepsPerSecond is trials / Elapsed, the implementation's start and
	// the edge cases excluded.
	StepsPerSecond float64 `json:"steps_per_second"`
}

// UsageError marks a configuration the harness refuses before starting
// anything (bad mode, flags, source or sampling parameters).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(err error) error { return &UsageError{err} }

// Run starts the implementation, checks it on src (a pool: rows sent once;
// a model pair: rows per batch, verify mode only), runs the edge cases,
// and stops it. Errors of the implementation (crash, timeout, malformed
// output) come back as one-line errors naming the batch and step; the
// child is killed before Run returns.
func Run(ctx context.Context, src sim.Source, cfg RunConfig) (Report, error) {
	pool, _ := sim.PoolOf(src.BlockSource)
	pair, _ := sim.PairOf(src.BlockSource)
	var s *data.Sampling
	if cfg.Sampling != nil {
		s = &data.Sampling{Temperature: cfg.Sampling.Temperature, TopK: cfg.Sampling.TopK, TopP: cfg.Sampling.TopP, MinP: cfg.Sampling.MinP}
		if err := s.Validate(); err != nil {
			return Report{}, usage(err)
		}
		if pool == nil {
			return Report{}, usage(fmt.Errorf("sampling parameters need a pool source (dirichlet:, temperature:, zipf:)"))
		}
	}
	if pool == nil && cfg.Mode == Step {
		return Report{}, usage(fmt.Errorf("step mode needs a pool source (rows that do not depend on the drafts); use --source dirichlet:... or --mode verify"))
	}
	rep := Report{Command: cfg.Command, Mode: cfg.Mode, Source: src.Spec, Gamma: cfg.Check.Gamma, Batch: cfg.Check.Batch, Sampling: cfg.Sampling}
	target := pool
	if pool != nil {
		cfg.Check.Gamma, cfg.Gamma, cfg.V = pool.Gamma, pool.Gamma, pool.V
		if s != nil {
			tp, err := TransformPool(pool, *s)
			if err != nil {
				return Report{}, usage(err)
			}
			target = tp
		}
	} else {
		cfg.Gamma, cfg.V = cfg.Check.Gamma, pair.P.Vocab()
	}
	if cfg.Check.Batch == 0 {
		cfg.Check.Batch = DefaultBatch
	}
	rep.Gamma, rep.Batch = cfg.Check.Gamma, cfg.Check.Batch
	if err := cfg.Check.defaults(); err != nil {
		return rep, usage(err)
	}
	if cfg.Mode != Verify && cfg.Mode != Step {
		return rep, usage(fmt.Errorf("mode %q; use %q or %q", cfg.Mode, Verify, Step))
	}
	im, err := Start(cfg.Config)
	if err != nil {
		return rep, err
	}
	defer im.Kill()
	rep.Implementation = im.Name()
	start := time.Now()
	var res check.Result
	if pool != nil {
		if err := im.SetPool(pool); err != nil {
			return rep, err
		}
		start = time.Now()
		res, err = Pool(ctx, target, im, cfg.Check)
	} else {
		res, err = Pair(ctx, pair, im, cfg.Check)
	}
	rep.Elapsed = time.Since(start).Seconds()
	rep.Result = res
	if err != nil {
		return rep, err
	}
	if rep.Elapsed > 0 {
		rep.StepsPerSecond = float64(res.Trials) / rep.Elapsed
	}
	rep.StatVerdict, rep.Edge = res.Verdict, check.Preserved
	if !res.Interrupted {
		viol, err := im.Edge(s)
		if err != nil {
			return rep, fmt.Errorf("%v (edge-case batch)", err)
		}
		if viol != nil {
			rep.Edge, rep.EdgeMsg, rep.Verdict = check.Violated, viol.Error(), check.Violated
		}
	}
	if err := im.Close(); err != nil {
		return rep, err
	}
	return rep, nil
}
