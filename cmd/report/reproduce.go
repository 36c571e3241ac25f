package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/job"
	"github.com/specsim/specsim/report"
)

func reproduceCommand() *cli.Command {
	return &cli.Command{
		Name:  "reproduce",
		Usage: "the main job: run every named experiment, store the rows, write figures, tables, report.md and the paper",
		Description: "Runs the main job's experiments (" + strings.Join(report.MainExperiments, ", ") + `) at their default size
(times --scale), stores each as a sweep under OUT/runs/NAME (cells, then merged.parquet; a
re-run resumes), and builds OUT/report.md with OUT/figures, OUT/tables and OUT/csv; with
latexmk installed also OUT/paper/paper.pdf.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "results", Usage: "output `DIR`"},
			&cli.Uint64Flag{Name: "seed", Value: report.DefaultSeed, Usage: "master seed"},
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "multiply every default trial count (2: twice the trials)"},
			&cli.IntFlag{Name: "workers", Value: 0, Usage: "cells computed in parallel (0: all cores)"},
			&cli.BoolFlag{Name: "paper", Value: true, Usage: "build the PDF with latexmk when it is installed"},
			&cli.StringSliceFlag{Name: "only", Usage: "run only these experiments (repeatable; default all)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return diag.Usage(fmt.Errorf("reproduce takes no arguments; use --out DIR"))
			}
			ctx, stop := job.SignalContext(c.Context)
			defer stop()
			path, err := report.Job(ctx, report.ReproduceOptions{Out: c.String("out"), Seed: c.Uint64("seed"), Scale: c.Float64("scale"),
				Workers: c.Int("workers"), Paper: c.Bool("paper"), Experiments: c.StringSlice("only"), Log: c.App.ErrWriter})
			if err != nil {
				// The option report.Job calls experiments is --only here;
				// the other fields share their flags' names (cliutil.FlagNames).
				return diag.Rename(err, func(name string) (string, bool) { return "--only", name == "experiments" })
			}
			fmt.Fprintln(c.App.Writer, path)
			return nil
		},
	}
}
