package cli

import (
	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/escape"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/experiments/sweep"
)

func init() { register(slurmCommand) }

func slurmCommand() *cli.Command {
	return &cli.Command{
		Name:  "slurm",
		Usage: "write (and with --submit, submit) a Slurm job array running a sweep shard per task, and a merge job after it",
		Description: `Writes DIR/slurm/sweep.sbatch, a job array with one task per shard, each
running 'simulate run NAME|SPEC --out DIR' (the shard comes from
SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT), and DIR/slurm/merge.sbatch,
running 'report merge DIR' once every task succeeded
(--dependency=afterok:<array job>). The master seed is fixed in the
scripts, so every task and any re-submission compute the same cells.`,
		ArgsUsage: "NAME|SPEC, or --check -- CHECK-FLAGS...",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "check", Usage: "run a sharded check instead of a sweep: its flags follow '--' ('simulate slurm --check --shards N --out DIR -- --algo token --trials 1000000000 ...'); each array task runs 'simulate check --shard I/N --state-out DIR/state/shard-I.state', the merge job 'simulate check --merge'"},
			&cli.IntFlag{Name: "shards", Usage: "number of array tasks `N` (required)"},
			&cli.StringFlag{Name: "out", Usage: "results directory `DIR` shared by all tasks (required)"},
			&cli.StringFlag{Name: "partition", Usage: "Slurm partition (#SBATCH --partition)"},
			&cli.StringFlag{Name: "time", Usage: "time limit per task, e.g. 01:00:00 (#SBATCH --time)"},
			&cli.StringFlag{Name: "gres", Usage: "generic resources per task, e.g. gpu:1 (#SBATCH --gres)"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: "cells in parallel per task (also --cpus-per-task)"},
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "multiply the default trial counts"},
			&cli.StringFlag{Name: "report", Usage: "path of the report binary (default: next to simulate, else $PATH)"},
			&cli.StringFlag{Name: "sbatch", Value: "sbatch", Usage: "sbatch command"},
			&cli.BoolFlag{Name: "submit", Usage: "submit both jobs with sbatch and print their ids"},
			seedFlag(), jsonFlag(),
		},
		Action: slurmAction,
	}
}

func slurmAction(c *cli.Context) error {
	if c.Bool("check") {
		return slurmCheckAction(c)
	}
	target, err := cliutil.OneArg(c, "experiment name or spec file")
	if err != nil {
		return err
	}
	ctx, stop := signalContext(c.Context)
	defer stop()
	res, err := sweep.Slurm(ctx, sweep.SlurmOptions{Target: target, Out: c.String("out"),
		Shards: c.Int("shards"), Workers: c.Int("workers"), Scale: c.Float64("scale"), ScaleSet: c.IsSet("scale"),
		Seed: c.Uint64("seed"), ClockSeed: func() uint64 { return masterSeed(c) }, Partition: c.String("partition"),
		Time: c.String("time"), Gres: c.String("gres"), Report: c.String("report"), Sbatch: c.String("sbatch"), Submit: c.Bool("submit")})
	res.Warnings.Print(c.App.ErrWriter, c.App.Name)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return cliutil.WriteJSON(c.App.Writer, res)
	}
	return res.WriteText(escape.TerminalWriter(c.App.Writer))
}
