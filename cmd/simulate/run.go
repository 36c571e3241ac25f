package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/experiments"
)

func init() { register(runCommand) }

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a named experiment and print its rows",
		ArgsUsage: "NAME",
		Flags: []cli.Flag{
			seedFlag(), workersFlag(0), jsonFlag(),
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "multiply the default trial counts"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr(fmt.Errorf("run needs one experiment name; known: %s", strings.Join(experiments.Names(), ", ")))
			}
			e, err := experiments.Lookup(c.Args().First())
			if err != nil {
				return usageErr(err)
			}
			if s := c.Float64("scale"); !(s > 0) {
				return usageErr(fmt.Errorf("--scale = %g; use a positive factor", s))
			}
			seed := masterSeed(c)
			fmt.Fprintf(c.App.ErrWriter, "simulate: experiment %s, seed %d\n", e.Name, seed)
			ctx, stop := signalContext(c.Context)
			defer stop()
			rows, err := experiments.RunAll(ctx, e, experiments.Config{Seed: seed, Workers: c.Int("workers"), Scale: c.Float64("scale")})
			if err != nil {
				if ctx.Err() != nil {
					return interruptedErr(err)
				}
				return err
			}
			for i := range rows {
				rows[i] = append(rows[i], experiments.KV{K: "seed", V: int64(seed)})
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, rows)
			}
			return printRows(c, rows)
		},
	}
}

// printRows writes rows as an aligned text table (columns of the first row).
func printRows(c *cli.Context, rows []experiments.Row) error {
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	var head []string
	for _, kv := range rows[0] {
		head = append(head, kv.K)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		var cells []string
		for _, k := range head {
			v, _ := r.Get(k)
			if f, ok := v.(float64); ok {
				cells = append(cells, fmt.Sprintf("%.6g", f))
			} else {
				cells = append(cells, fmt.Sprint(v))
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
