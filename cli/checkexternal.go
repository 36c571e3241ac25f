package cli

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/external"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// externalFlags are the flags 'simulate check' takes for an external
// implementation (--external and the flags that only apply to it).
func externalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "external", Usage: "check an implementation outside this program: a command (run with /bin/sh -c) that speaks the external protocol, e.g. \"python3 -m specsim_ext mymodule:verify\" (see docs/external.md)"},
		&cli.StringFlag{Name: "mode", Value: external.Verify, Usage: "with --external: verify (the harness samples the drafts) or step (the implementation samples its own drafts from logits)"},
		&cli.IntFlag{Name: "batch", Value: external.DefaultBatch, Usage: "with --external: steps per batch (independent sequences per call)"},
		&cli.DurationFlag{Name: "timeout", Value: external.DefaultTimeout, Usage: "with --external: the longest wait for one answer; the implementation is killed after it"},
		&cli.Float64Flag{Name: "temperature", Value: 1, Usage: "with --external: sampling temperature passed to a function with a fourth parameter; the target law is transformed the same way"},
		&cli.IntFlag{Name: "top-k", Usage: "with --external: top-k (0: off)"},
		&cli.Float64Flag{Name: "top-p", Value: 1, Usage: "with --external: top-p (1: off)"},
		&cli.Float64Flag{Name: "min-p", Usage: "with --external: min-p (0: off)"},
	}
}

// checkExternal is 'simulate check --external CMD': it builds the source
// as check does and calls external.Run.
func checkExternal(c *cli.Context) error {
	seed := masterSeed(c)
	gamma := c.Int("gamma")
	var src sim.Source
	if c.IsSet("p") || c.IsSet("q") {
		pr, err := pairFromFlags(c, seed)
		if err != nil {
			return err
		}
		ch, err := sim.NewChain(pr, gamma)
		if err != nil {
			return diag.Usage(err)
		}
		src = sim.Source{Spec: "fixed", BlockSource: ch}
	} else {
		if gamma < 1 || gamma > sim.MaxGamma {
			return diag.Usage(fmt.Errorf("--gamma = %d; use 1 <= gamma <= %d", gamma, sim.MaxGamma))
		}
		var err error
		if src, err = source.New(c.String("source"), gamma, seed, memBudget(c)); err != nil {
			return diag.Usage(err)
		}
	}
	cfg := external.RunConfig{
		Config: external.Config{Command: c.String("external"), Mode: c.String("mode"), Timeout: c.Duration("timeout")},
		Check: check.Config{Gamma: gamma, Trials: c.Int64("trials"), Seconds: c.Float64("seconds"), Batch: c.Int("batch"),
			Seed: seed, Level: c.Float64("level"), Power: c.Float64("power")},
		Conform: c.String("conform"),
	}
	if c.IsSet("temperature") || c.IsSet("top-k") || c.IsSet("top-p") || c.IsSet("min-p") {
		cfg.Sampling = &external.Sampling{Temperature: c.Float64("temperature"), TopK: c.Int("top-k"), TopP: c.Float64("top-p"), MinP: c.Float64("min-p")}
	}
	ctx, stop := signalContext(c.Context)
	defer stop()
	bar := newHeaded(c.App.ErrWriter, fmt.Sprintf("simulate: check --external %q (%s mode), seed %d", cfg.Command, cfg.Mode, seed), cfg.Check.Trials, "trials")
	cfg.Check.Progress = bar.update
	rep, err := external.Run(ctx, src, cfg)
	bar.done(err != nil && ctx.Err() == nil)
	if err != nil && ctx.Err() == nil {
		return err // usage errors are marked by external.Run
	}
	if werr := printResult(c, rep, func(w io.Writer) {
		printCheck(w, newCheckJSON(rep.Report, rep.Elapsed))
		fmt.Fprintf(w, "external %s (%s mode, batch %d): %.0f steps/s\n", rep.Implementation, rep.ExternalMode, rep.Batch, rep.StepsPerSecond)
	}); werr != nil {
		return werr
	}
	return checkExit(ctx, rep.Implementation, rep.Report, cfg.Check.Trials)
}
