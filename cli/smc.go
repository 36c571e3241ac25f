package cli

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/smc"
)

func init() { register(smcCommand) }

// smcCommand is 'simulate smc': SMC steering (Lew et al. arXiv 2306.03081,
// Algorithm 5) on a Feynman–Kac model over a model pair,
// judged against exact enumeration (package smc).
func smcCommand() *cli.Command {
	return &cli.Command{
		Name:  "smc",
		Usage: "SMC steering: E[Z-hat] = Z and the posterior of one resampling scheme against exact enumeration",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "source", Value: "markov:V=4,order=1,a=0.5,quality=0.5,seed=3", Usage: "model pair spec (markov:...)"},
			&cli.StringFlag{Name: "lm", Value: "p", Usage: "the pair's model used as M: p (target) or q (draft)"},
			&cli.IntFlag{Name: "eos", Value: 0, Usage: "the EOS token"},
			&cli.IntFlag{Name: "max-len", Value: 5, Usage: "horizon T: strings end with EOS or are cut at T tokens"},
			&cli.Float64Flag{Name: "temperature", Usage: "temper M's rows: norm(p^(1/temperature)) (0: untempered)"},
			&cli.StringFlag{Name: "prompt", Usage: "prompt tokens, e.g. 1,2 (default: empty)"},
			&cli.StringSliceFlag{Name: "potential", Value: cli.NewStringSlice("forbid:1", "end", "expert:q"),
				Usage: "potential (repeatable): forbid:1,2 | end | length:2-4 | keyword:2 | expert:q[:power] | expert:p[:power]"},
			&cli.StringFlag{Name: "scheme", Value: "fc", Usage: "fc, fc-bisect, is, multinomial, systematic, stratified, or a mutant (mutant-alpha-idet, mutant-no-factor, mutant-no-reset, mutant-findc-first)"},
			&cli.IntFlag{Name: "n", Value: 16, Usage: "particles N"},
			&cli.IntFlag{Name: "k", Value: 2, Usage: "expansion factor K: children per unfinished particle (1 for is); not the draft candidates --k of check, exact, generate, bench and bound"},
			&cli.Float64Flag{Name: "bisect-tol", Value: smc.DefaultBisectTol, Usage: "fc-bisect: relative width at which bisection stops"},
			&cli.Int64Flag{Name: "runs", Value: 20000, Usage: "independent SMC runs R"},
			&cli.Float64Flag{Name: "level", Value: smc.DefaultLevel, Usage: "family-wise significance level"},
			&cli.Float64Flag{Name: "power", Value: smc.DefaultPower, Usage: "power at which the detectable relative bias is reported"},
			&cli.BoolFlag{Name: "no-convergence", Usage: "skip the R/4 runs at 4N particles that test the posterior's convergence"},
			workersFlag(0), seedFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			prompt, err := smc.ParseTokens(c.String("prompt"))
			if err != nil {
				return diag.Usage(err)
			}
			seed := masterSeed(c)
			cfg := smc.CheckConfig{ModelSpec: smc.ModelSpec{Source: c.String("source"), LM: c.String("lm"), Prompt: prompt, EOS: c.Int("eos"),
				T: c.Int("max-len"), Temperature: c.Float64("temperature"), Potentials: c.StringSlice("potential"), MemBudget: memBudget(c)},
				Scheme: c.String("scheme"), Config: smc.Config{N: c.Int("n"), K: c.Int("k"), BisectTol: c.Float64("bisect-tol")},
				Runs: c.Int64("runs"), Seed: seed, Level: c.Float64("level"), Power: c.Float64("power"),
				NoConvergence: c.Bool("no-convergence"), Workers: c.Int("workers")}
			ctx, stop := signalContext(c.Context)
			defer stop()
			total := cfg.Runs
			if !cfg.NoConvergence {
				total += max(1, cfg.Runs/smc.ConvergenceFactor)
			}
			bar := newHeaded(c.App.ErrWriter, fmt.Sprintf("simulate: smc %s, seed %d", cfg.Scheme, seed), total, "runs")
			cfg.Progress = bar.update
			rep, err := smc.Check(ctx, cfg)
			bar.done(err != nil && ctx.Err() == nil)
			if err != nil && ctx.Err() == nil {
				return diag.Usage(err)
			}
			if werr := printResult(c, rep, func(w io.Writer) { fmt.Fprint(w, rep.Text()) }); werr != nil {
				return werr
			}
			switch {
			case ctx.Err() != nil:
				return diag.Interrupted(fmt.Errorf("interrupted after %d of %d runs; no verdict", rep.Runs, cfg.Runs))
			case rep.Verdict == smc.Violated:
				return diag.Violated(fmt.Errorf("smc %s: %s", rep.Scheme, rep.Reasons[0]))
			case rep.Verdict == smc.Inconclusive:
				return diag.Inconclusive(fmt.Errorf("smc %s: %s", rep.Scheme, rep.Reasons[0]))
			}
			return nil
		},
	}
}
