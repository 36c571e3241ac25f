package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

func init() { register(replayCommand) }

// logErr is a data error with its kind: the library's where it gave one
// (data.ErrInvalid content: usage; data.ErrCorrupt: I/O), else I/O (the
// file could not be read).
func logErr(err error) error {
	switch {
	case diag.KindOf(err) != nil:
		return err
	case errors.Is(err, sim.ErrMemBudget): // a log declaring more than --mem-budget
		return diag.Usage(err)
	}
	return diag.IO(err)
}

// replayErr is an error of experiments.ReplayLog with its kind: bad
// options (experiments.ErrBadInput, usage) and a failed check with
// FailOnViolation (experiments.ErrViolated) as marked, else interrupted
// when ctx was cancelled, else the log's (logErr).
func replayErr(ctx context.Context, err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, experiments.ErrBadInput), errors.Is(err, experiments.ErrViolated):
		return err
	case ctx.Err() != nil:
		return diag.Interrupted(err)
	case errors.Is(err, data.ErrInvalid), errors.Is(err, data.ErrCorrupt), errors.As(err, &pe):
		return logErr(err)
	}
	return err
}

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "replay acceptance rules over a logged run: exact expectations given each logged draft, sampled outcomes, divergences and a losslessness check",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log", Usage: "the log (parquet, schema of package data); the same as the positional FILE"},
			&cli.StringFlag{Name: "algo", Value: "token", Usage: "comma-separated rules (see 'simulate list'), default parameters"},
			&cli.IntFlag{Name: "reps", Value: 1, Usage: "sampled outcomes per step and rule"},
			&cli.Int64Flag{Name: "max-steps", Usage: "stop after this many steps (0: all)"},
			&cli.StringFlag{Name: "bug", Value: "none", Usage: "plant a p/q processing bug (logit logs): none, p-raw, q-raw, q-bf16"},
			&cli.Float64Flag{Name: "level", Value: 0.001, Usage: "significance level of the losslessness verdict"},
			&cli.BoolFlag{Name: "no-divergences", Usage: "skip the per-position KL and TV (alpha is always computed)"},
			&cli.StringFlag{Name: "steps-out", Usage: "write every step's exact and sampled values to this CSV file"},
			&cli.BoolFlag{Name: "decode-only", Usage: "only decode the rows with parquet-go (the I/O floor) and report steps/s and MB/s"},
			&cli.BoolFlag{Name: "fail-on-violation", Usage: "exit 3 when a rule that is neither a mutant nor lossy fails the losslessness check"},
			seedFlag(), jsonFlag(),
		},
		ArgsUsage: "FILE",
		Action: func(c *cli.Context) error {
			log, err := fileArg(c, "log")
			if err != nil {
				return err
			}
			opt := experiments.ReplayOptions{Log: log, Bug: c.String("bug"), Algos: strings.Split(c.String("algo"), ","),
				Reps: c.Int("reps"), MaxSteps: c.Int64("max-steps"), Level: c.Float64("level"), NoDivergences: c.Bool("no-divergences"),
				StepsOut: c.String("steps-out"), FailOnViolation: c.Bool("fail-on-violation"), MemBudget: memBudget(c),
				AlgosDefault: !c.IsSet("algo")}
			if c.Bool("decode-only") {
				if err := opt.Validate(); err != nil {
					return diag.Usage(err)
				}
				return decodeOnly(c, log, opt.MemBudget)
			}
			opt.Seed = masterSeed(c)
			ctx, cancel := signalContext(c.Context)
			defer cancel()
			out, err := experiments.ReplayLog(ctx, opt)
			if out != nil {
				if werr := printResult(c, out, func(w io.Writer) { out.WriteText(w, c.App.ErrWriter) }); werr != nil {
					return diag.IO(werr)
				}
			}
			if err != nil {
				return replayErr(ctx, err)
			}
			return nil
		},
	}
}

func decodeOnly(c *cli.Context, log string, budget int64) error {
	out, err := data.DecodeFile(log, budget)
	if err != nil {
		return logErr(err)
	}
	return printResult(c, out, func(w io.Writer) {
		fmt.Fprintf(w, "decoded %d steps of %s in %.2f s: %.1f steps/s, %.1f MB/s\n", out.Steps, out.Log, out.ElapsedS, out.StepsPerSec, out.MBPerSec)
	})
}
