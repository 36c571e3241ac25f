package cli

import (
	"strings"

	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/diag"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/table"
)

func init() { register(scenarioCommand) }

func scenarioCommand() *cli.Command {
	return &cli.Command{
		Name:      "scenario",
		Usage:     "run a named multi-candidate scenario (fms-example, fms-coverage) exactly and by simulation",
		ArgsUsage: "NAME",
		Flags: []cli.Flag{
			algoFlag("shared-uniform"),
			&cli.Int64Flag{Name: "trials", Value: 100000, Usage: "simulated steps"},
			seedFlag(), workersFlag(0), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if args := c.Args().Slice(); len(args) > 1 && strings.HasPrefix(args[1], "-") {
				// urfave/cli stops parsing flags at the first argument; accept
				// 'scenario NAME --flags' by moving the name last.
				re := append([]string{c.App.Name, "scenario"}, args[1:]...)
				return c.App.RunContext(c.Context, append(re, args[0]))
			}
			name, err := cliutil.OneArg(c, "name; known: "+strings.Join(experiments.ScenarioNames(), ", "))
			if err != nil {
				return err
			}
			seed := masterSeed(c)
			ctx, stop := signalContext(c.Context)
			defer stop()
			row, err := experiments.Scenario(ctx, name, c.String("algo"), c.Int64("trials"), seed, c.Int("workers"))
			if row != nil {
				// Printed also when interrupted: the row holds the finished trials.
				var werr error
				if c.Bool("json") {
					werr = cliutil.WriteJSON(c.App.Writer, row)
				} else {
					werr = cliutil.PrintRows(c.App.Writer, []table.Row{row})
				}
				if werr != nil && err == nil {
					return diag.IO(werr)
				}
			}
			switch {
			case err == nil:
				return nil
			case ctx.Err() != nil:
				return diag.Interrupted(err)
			}
			return diag.Usage(err)
		},
	}
}
