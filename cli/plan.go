package cli

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim"
)

func init() { register(planCommand) }

func planCommand() *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "how many trials (and seconds on this machine, at the rate of the largest check it ran; and shards of a Slurm array of --task-time each) a check needs to detect a deviation of TV >= --tv in a test's quantity with power --power",
		Flags: append(append(checkFlags(),
			&cli.Float64Flag{Name: "tv", Required: true, Usage: "the total variation to detect, in (0, 1), in the test's quantity"},
			&cli.StringFlag{Name: "test", Usage: "the test to plan for, by name as check prints it (default: the test with the smallest detectable TV)"},
		), planFlags()...),
		Action: func(c *cli.Context) error {
			if err := levelLimits(c); err != nil {
				return err
			}
			req, err := checkRequest(c)
			if err != nil {
				return err
			}
			ctx, stop := signalContext(c.Context)
			defer stop()
			fmt.Fprintf(c.App.ErrWriter, "simulate: plan for %s, seed %d: a pilot check, then the planned one\n", req.Algo, req.Seed)
			rep, err := resolve.Plan(ctx, req, c.Float64("tv"), c.String("test"))
			if ctx.Err() != nil {
				return diag.Interrupted(errors.New("interrupted before the plan was complete; nothing to report"))
			}
			if err != nil {
				return err
			}
			out, err := planShards(c, rep, req.Seed)
			if err != nil {
				return err
			}
			return printResult(c, out, func(w io.Writer) {
				defer printPlanShards(w, out)
				fmt.Fprintf(w, "%s on %s, gamma %d, mode %s\n", rep.Algorithm, rep.Source, rep.Gamma, rep.Mode)
				fmt.Fprintf(w, "to detect a deviation of TV >= %g with probability %g at level %g in test %q (%s):\n", rep.TV, rep.Power, rep.Level, rep.Test, rep.Quantity)
				if rep.OverCap {
					need := fmt.Sprintf("about %.3g", rep.NeededTrials)
					if math.IsInf(rep.NeededTrials, 1) {
						need = "more than the plan can compute" // needed_trials is null in JSON
					}
					fmt.Fprintf(w, "  %s trials, more than the %.0e a check accepts (--trials at most %d): this TV cannot be planned; at the cap a check, about %.3g s on this machine, detects TV >= %.3g (pilot: %d trials in %.1f s detect TV >= %.3g)\n",
						need, float64(sim.MaxTrials), int64(sim.MaxTrials), rep.Seconds, rep.CapTV, rep.PilotTrials, rep.PilotSeconds, rep.PilotTV)
					return
				}
				fmt.Fprintf(w, "  --trials %d, about %.0f s on this machine at the %s's rate (pilot: %d trials in %.1f s detect TV >= %.3g)\n", rep.Trials, rep.Seconds, rep.SecondsFrom, rep.PilotTrials, rep.PilotSeconds, rep.PilotTV)
				switch {
				case rep.CheckedTV != nil:
					fmt.Fprintf(w, "  checked: a check of %d trials detects TV >= %.3g in this test\n", rep.Trials, *rep.CheckedTV)
				case rep.BoundTV != nil:
					fmt.Fprintf(w, "  bound: a check of %d trials states TV <= %.3g for this test (its degrees of freedom at their most, every cell of every draw filled; not run)\n", rep.Trials, *rep.BoundTV)
				default:
					fmt.Fprintf(w, "  (beyond %d trials the count is the pilot's TV scaled as 1/sqrt(trials), not run)\n", resolve.ConfirmMaxTrials)
				}
			})
		},
	}
}
