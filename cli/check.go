package cli

import (
	"fmt"
	"time"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

func init() { register(checkCommand) }

// checkJSON is the JSON form of 'simulate check'.
type checkJSON struct {
	Algorithm string             `json:"algorithm"`
	Params    map[string]float64 `json:"params"`
	Source    string             `json:"source"`
	Gamma     int                `json:"gamma"`
	check.Result
	Edge    string  `json:"edge_verdict"`
	EdgeMsg string  `json:"edge_message,omitempty"`
	Elapsed float64 `json:"elapsed_seconds"`
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "statistical losslessness check: emitted tokens against the target law, with stated power",
		Flags: append([]cli.Flag{
			algoFlag("token"), paramFlag(),
			&cli.StringFlag{Name: "source", Value: "dirichlet:V=32000,a=0.1,beta=0.7", Usage: "source spec: dirichlet:..., temperature:..., zipf:... (pools) or markov:... (model pair)"},
			&cli.StringFlag{Name: "p", Usage: "a context-free target instead of --source (with --q)"},
			&cli.StringFlag{Name: "q", Usage: "a context-free draft instead of --source (with --p)"},
			&cli.IntFlag{Name: "gamma", Value: 4, Usage: "draft length γ"},
			&cli.Int64Flag{Name: "trials", Value: 200000, Usage: "speculative steps"},
			&cli.Float64Flag{Name: "level", Value: check.DefaultLevel, Usage: "family-wise significance level"},
			&cli.Float64Flag{Name: "power", Value: check.DefaultPower, Usage: "power at which min_detectable_tv is reported"},
			workersFlag(0), seedFlag(), jsonFlag(),
		}, externalFlags()...),
		Action: func(c *cli.Context) error {
			if c.IsSet("external") {
				return checkExternal(c)
			}
			e, a, ps, err := buildAlgo(c)
			if err != nil {
				return err
			}
			seed := masterSeed(c)
			cfg := check.Config{Gamma: c.Int("gamma"), Trials: c.Int64("trials"), Seed: seed, Level: c.Float64("level"),
				Power: c.Float64("power"), Greedy: e.Greedy, Workers: c.Int("workers")}
			fmt.Fprintf(c.App.ErrWriter, "simulate: check %s, seed %d\n", e.Name, seed)
			var pair *sim.Pair
			var pool *sim.Pool
			source := c.String("source")
			if c.IsSet("p") || c.IsSet("q") {
				pr, err := pairFromFlags(c, seed)
				if err != nil {
					return err
				}
				pair, source = &pr, "fixed"
			} else {
				if cfg.Gamma < 1 || cfg.Gamma > sim.MaxGamma {
					return cliutil.Usage(fmt.Errorf("--gamma = %d; use 1 <= gamma <= %d", cfg.Gamma, sim.MaxGamma))
				}
				src, err := sim.NewSource(source, cfg.Gamma, seed)
				if err != nil {
					return cliutil.Usage(err)
				}
				if pr, ok := sim.PairOf(src); ok {
					pair = &pr
				}
				pool, _ = sim.PoolOf(src)
				source = src.Spec
			}
			ctx, stop := signalContext(c.Context)
			defer stop()
			bar := newProgress(c.App.ErrWriter, cfg.Trials, "trials")
			cfg.Progress = bar.update
			start := time.Now()
			var res check.Result
			if pool != nil {
				res, err = check.Pool(ctx, pool, a, cfg)
			} else {
				res, err = check.Pair(ctx, *pair, a, cfg)
			}
			bar.finish()
			if err != nil && ctx.Err() == nil {
				return cliutil.Usage(err)
			}
			out := checkJSON{Algorithm: e.Name, Params: ps, Source: source, Gamma: cfg.Gamma, Result: res,
				Edge: check.Preserved, Elapsed: time.Since(start).Seconds()}
			if eerr := check.EdgeCheck(a); eerr != nil {
				out.Edge, out.EdgeMsg = check.Violated, eerr.Error()
			}
			if c.Bool("json") {
				if werr := cliutil.WriteJSON(c.App.Writer, out); werr != nil {
					return werr
				}
			} else {
				printCheck(c, out)
			}
			switch {
			case ctx.Err() != nil:
				return cliutil.Interrupted(fmt.Errorf("interrupted after %d of %d trials; the report above covers the finished trials", res.Trials, cfg.Trials))
			case res.Verdict == check.Violated:
				return cliutil.Violated(fmt.Errorf("%s violates the target law (p = %.3g)", e.Name, res.PValue))
			}
			return nil
		},
	}
}

func printCheck(c *cli.Context, o checkJSON) {
	w := c.App.Writer
	fmt.Fprintf(w, "%s on %s, gamma %d, %d trials, seed %d\n", o.Algorithm, o.Source, o.Gamma, o.Trials, o.Seed)
	fmt.Fprintf(w, "verdict: %s (Holm-adjusted p = %.4g at level %g); edge cases: %s %s\n", o.Verdict, o.PValue, o.Level, o.Edge, o.EdgeMsg)
	fmt.Fprintf(w, "detects TV >= %.4g with power %g; binned TV estimate %.4g\n", o.MinDetectableTV, o.Power, o.TVEstimate)
	fmt.Fprintf(w, "alpha_hat %.4f, mean accepted %.4f, mean emitted %.4f [%.4f, %.4f]\n", o.AlphaHat, o.MeanAccepted, o.MeanEmitted, o.EmittedCI[0], o.EmittedCI[1])
	for _, t := range o.Tests {
		fmt.Fprintf(w, "  %-28s X2 = %10.2f  df = %5d  p = %.4g  p_holm = %.4g\n", t.Name, t.Stat, t.DF, t.PValue, t.PHolm)
	}
}
