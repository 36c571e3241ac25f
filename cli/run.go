package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/experiments/sweep"
)

func init() { register(runCommand) }

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run a named experiment or a sweep spec (TOML): print its rows, or store them cell by cell with --out",
		Description: `NAME is a registered experiment ('simulate list experiments' shows them; the
same names as 'report reproduce --only'); SPEC is a TOML sweep spec (see
experiments/specs/). Without --out the rows are printed.
With --out DIR each finished cell is written atomically to DIR/cells/; a
re-run computes only the missing cells (SIGINT/SIGTERM keep the finished
ones, exit code 4). The shard defaults from SLURM_ARRAY_TASK_ID and
SLURM_ARRAY_TASK_COUNT (Slurm job arrays) or JOB_COMPLETION_INDEX with
SPECSIM_SHARD_COUNT (Kubernetes indexed jobs). With --out it ends by
printing the next commands: report merge DIR && report build DIR (figures
and tables of any sweep). Without --seed the seed is the spec's, else the
stored run's, else 1; --seed 0 draws one from the clock.`,
		ArgsUsage: "NAME|SPEC",
		Flags: []cli.Flag{
			runSeedFlag(), workersFlag(0), jsonFlag(),
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "multiply the default trial counts (overrides the spec's scale)"},
			&cli.StringFlag{Name: "out", Usage: "store finished cells as parquet files under `DIR` (resumable)"},
			&cli.StringFlag{Name: "shard", Usage: "run only shard `i/n` (0-based): the cells whose index = i mod n"},
			&cli.IntFlag{Name: "shard-count", EnvVars: []string{sweep.EnvShardCount}, Usage: "shard count paired with JOB_COMPLETION_INDEX"},
			&cli.DurationFlag{Name: "progress-every", Value: 10 * time.Second, Usage: "interval of the plain progress lines (stderr not a terminal)"},
		},
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	target, err := cliutil.OneArg(c, "experiment name or spec file; known experiments: "+strings.Join(experiments.Names(), ", "))
	if err != nil {
		return err
	}
	ctx, stop := signalContext(c.Context)
	defer stop()
	o := sweep.RunOptions{Target: target, Seed: c.Uint64("seed"), Scale: c.Float64("scale"), ScaleSet: c.IsSet("scale"),
		Workers: c.Int("workers"), Shard: c.String("shard"), Out: c.String("out"), Log: c.App.ErrWriter,
		ProgressEvery: c.Duration("progress-every"), ClockSeed: func() uint64 { return masterSeed(c) }, MemBudget: memBudget(c)}
	if c.IsSet("shard-count") {
		o.Getenv = sweep.ShardCountEnv(c.Int("shard-count"))
	}
	rep, err := sweep.Execute(ctx, o)
	if err == nil && o.Out != "" {
		// stderr, so --json output stays one document
		fmt.Fprintf(c.App.ErrWriter, "simulate: next: report merge %s && report build %s  (merged table, then figures, tables and %s/report.md)\n",
			o.Out, o.Out, o.Out)
	}
	switch {
	case err != nil:
		return err
	case o.Out != "" && c.Bool("json"):
		return cliutil.WriteJSON(c.App.Writer, rep.Summary)
	case o.Out != "":
		return nil
	case c.Bool("json"):
		return cliutil.WriteJSON(c.App.Writer, rep.Rows)
	}
	return cliutil.PrintRows(c.App.Writer, rep.Rows)
}
