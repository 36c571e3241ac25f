package external

import (
	"context"
	"fmt"
	"time"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// DefaultBatch is the default batch size B (steps per round trip).
const DefaultBatch = 1024

// RunConfig is a whole external check: the implementation and the
// statistical check's settings. Check.Batch is the protocol's batch size
// B (DefaultBatch when 0); Check.Workers is ignored (one process answers
// one batch at a time, so the check runs on one worker).
type RunConfig struct {
	Config
	Check check.Config
	// Conform names a chain rule whose exact conditional law the steps
	// are tested against ("implements rule R", check.Rule.Conform); ""
	// runs the losslessness check.
	Conform string
}

// Report is check's report for the implementation (Algorithm is its
// name; Verdict folds in the edge cases as check does for Go rules) with
// the external run's facts.
type Report struct {
	resolve.Report
	Implementation string `json:"implementation"`
	Command        string `json:"command"`
	// ExternalMode is Verify or Step (Mode is check's: lossless or
	// conform:R).
	ExternalMode string    `json:"external_mode"`
	Batch        int       `json:"batch"`
	Sampling     *Sampling `json:"sampling,omitempty"`
	// Elapsed is the check's wall-clock time, the implementation's start
	// and the edge cases excluded (a --seconds budget's pilot included).
	Elapsed float64 `json:"elapsed_seconds"`
	// StepsPerSecond is the steps the implementation answered in Elapsed.
	StepsPerSecond float64 `json:"steps_per_second"`
}

// usage marks a configuration the harness refuses before starting
// anything (bad mode, command, source or sampling parameters) as a usage
// error (diag.ErrUsage).
func usage(err error) error { return diag.Usage(err) }

// Run starts the implementation, checks it with check.Check on src (a
// pool: rows sent once, batches carry context indices; a model pair: rows
// per batch, verify mode only), runs the edge cases (Edge) and stops it.
// With sampling parameters the check's source is the transformed pool
// (TransformPool) while the implementation holds the raw rows; the two
// share their context indices. Errors of the implementation (crash,
// timeout, malformed output) come back as one-line errors naming the
// batch and step; the child is killed before Run returns.
func Run(ctx context.Context, src sim.Source, cfg RunConfig) (Report, error) {
	pool, _ := sim.PoolOf(src.BlockSource)
	pair, isPair := sim.PairOf(src.BlockSource)
	if cfg.Check.Batch == 0 {
		cfg.Check.Batch = DefaultBatch
	}
	cfg.Check.Workers = 1
	rep := Report{Command: cfg.Command, ExternalMode: cfg.Mode, Batch: cfg.Check.Batch, Sampling: cfg.Sampling}
	rep.Source, rep.Gamma = src.Spec, cfg.Check.Gamma
	if cfg.Mode != Verify && cfg.Mode != Step {
		return rep, diag.Param("mode", " %q; use %q or %q", cfg.Mode, Verify, Step)
	}
	var s *data.Sampling
	if cfg.Sampling != nil {
		s = &data.Sampling{Temperature: cfg.Sampling.Temperature, TopK: cfg.Sampling.TopK, TopP: cfg.Sampling.TopP, MinP: cfg.Sampling.MinP}
		if err := s.Validate(); err != nil {
			return rep, usage(err)
		}
		if pool == nil {
			return rep, usage(fmt.Errorf("sampling parameters need a pool source (dirichlet:, temperature:, zipf:)"))
		}
	}
	if pool == nil && cfg.Mode == Step {
		return rep, usage(fmt.Errorf("step mode needs a pool source (rows that do not depend on the drafts); use a pool such as dirichlet:... or verify mode"))
	}
	checked := src
	switch {
	case pool != nil:
		cfg.Check.Gamma, cfg.Gamma, cfg.V = pool.Gamma, pool.Gamma, pool.V
		if s != nil {
			tp, err := TransformPool(pool, *s)
			if err != nil {
				return rep, usage(err)
			}
			checked = sim.Source{Spec: src.Spec, BlockSource: tp}
		}
	case isPair:
		if err := pair.Check(); err != nil {
			return rep, usage(err)
		}
		cfg.Gamma, cfg.V = cfg.Check.Gamma, pair.P.Vocab()
	default:
		return rep, usage(fmt.Errorf("empty source"))
	}
	rep.Gamma = cfg.Gamma
	rule := check.Rule{Name: "external"}
	if cfg.Conform != "" {
		lw, err := resolve.ChainLaw(cfg.Conform)
		if err != nil {
			return rep, usage(err)
		}
		rule.Law, rule.LawName, rule.Conform = lw, cfg.Conform, true
	}
	im, err := StartContext(ctx, cfg.Config)
	if err != nil {
		return rep, err
	}
	defer im.Kill()
	rep.Implementation, rep.Algorithm = im.Name(), im.Name()
	rule.Name, rule.Steps = im.Name(), im
	if pool != nil {
		if err := im.SetPool(pool); err != nil {
			return rep, err
		}
	}
	start := time.Now()
	res, err := check.Check(ctx, checked, rule, cfg.Check)
	rep.Elapsed = time.Since(start).Seconds()
	rep.Result = res
	if rep.Elapsed > 0 {
		rep.StepsPerSecond = float64(im.Sent()) / rep.Elapsed
	}
	if err != nil {
		switch {
		case im.err != nil:
			// The implementation's own error already names the batch and
			// step; check's wrapping would repeat them.
			return rep, im.err
		case res.Verdict == "" && ctx.Err() == nil:
			return rep, usage(err) // refused by check before any step
		}
		return rep, err
	}
	if !res.Interrupted {
		// The edge cases enter the verdict as check's do for Go rules:
		// a failure makes it violated whatever the tests said.
		viol, err := im.Edge(s)
		if err != nil {
			return rep, fmt.Errorf("%v (edge-case batch)", err)
		}
		rep.Edge, rep.EdgeMsg = check.Preserved, ""
		if viol != nil {
			rep.Edge, rep.EdgeMsg, rep.Verdict = check.Violated, viol.Error(), check.Violated
		}
	}
	if err := im.Close(); err != nil {
		return rep, err
	}
	return rep, nil
}
