package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/diag"
)

func init() { register(logSyntheticCommand) }

func logSyntheticCommand() *cli.Command {
	return &cli.Command{
		Name:  "log-synthetic",
		Usage: "log a synthetic model pair's (or pool's) speculative run with token verification to a parquet log",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "source", Required: true, Usage: "model pair or pool spec, e.g. markov:V=4,order=1,seed=7 or dirichlet:V=32000,a=0.1,beta=0.7"},
			&cli.IntFlag{Name: "steps", Value: 1000, Usage: "steps (rows) to log"},
			gammaFlag("draft length gamma"),
			&cli.StringFlag{Name: "out", Required: true, Usage: "output file (parquet)"},
			&cli.IntFlag{Name: "sparse", Usage: "store the K largest entries per row plus the tail mass (0: dense)"},
			&cli.IntFlag{Name: "steps-per-prompt", Usage: "restart the context every N steps (0: one prompt)"},
			&cli.BoolFlag{Name: "logits", Usage: "store log-probabilities as raw logits (the reader applies the sampling flags)"},
			&cli.Float64Flag{Name: "temperature", Value: 1, Usage: "sampling temperature (0: greedy)"},
			&cli.IntFlag{Name: "top-k", Usage: "top-k filter (0: off)"},
			&cli.Float64Flag{Name: "top-p", Value: 1, Usage: "nucleus filter (1: off)"},
			&cli.Float64Flag{Name: "min-p", Usage: "min-p filter (0: off)"},
			&cli.StringFlag{Name: "run-id", Value: "synthetic", Usage: "run id stored in every row"},
			seedFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			seed := masterSeed(c)
			s := data.Sampling{Temperature: c.Float64("temperature"), TopK: c.Int("top-k"), TopP: c.Float64("top-p"), MinP: c.Float64("min-p")}
			opt := data.SyntheticOptions{Source: c.String("source"), Out: c.String("out"), Sparse: c.Int("sparse"), MemBudget: memBudget(c),
				Run: data.RunConfig{Steps: c.Int("steps"), Gamma: c.Int("gamma"), StepsPerPrompt: c.Int("steps-per-prompt"), Seed: seed,
					RunID: c.String("run-id"), Sampling: s, Logits: c.Bool("logits"), Rule: algos.Token{}}}
			ctx, cancel := signalContext(c.Context)
			defer cancel()
			out, err := data.LogSynthetic(ctx, opt)
			switch {
			case errors.Is(err, data.ErrConfig): // a usage error
				return err
			case err != nil && ctx.Err() != nil:
				return diag.Interrupted(fmt.Errorf("log-synthetic interrupted before all %d steps were logged to %s", opt.Run.Steps, opt.Out))
			case err != nil:
				return diag.IO(err)
			}
			return printResult(c, out, func(w io.Writer) {
				fmt.Fprintf(w, "wrote %s: %d steps of %s (V = %d, gamma = %d, %s %s, seed %d), %d bytes\n",
					out.Out, out.Steps, out.Source, out.V, out.Gamma, out.Layout, out.RowKind, out.Seed, out.Bytes)
			})
		},
	}
}
