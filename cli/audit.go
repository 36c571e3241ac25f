package cli

import (
	"fmt"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/experiments"
)

func init() { register(auditCommand) }

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "the losslessness audit: every rule and mutant, exact and statistical verdicts, alpha-hat and E[emitted] (Monte Carlo and exact, each column naming its source and gamma), as one table (the main job, with every experiment, is 'report reproduce')",
		Flags: []cli.Flag{seedFlag(), workersFlag(0), jsonFlag(),
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "multiply the statistical trial count (100000)"}},
		Action: func(c *cli.Context) error {
			seed := masterSeed(c)
			fmt.Fprintf(c.App.ErrWriter, "simulate: audit, seed %d; exact pairs, then %s (gamma %d)\n", seed, experiments.AuditSource, experiments.AuditStatGamma)
			ctx, stop := signalContext(c.Context)
			defer stop()
			bar := newProgress(c.App.ErrWriter, int64(experiments.AuditRules()), "rules")
			rows, err := experiments.RunAudit(ctx, experiments.AuditOptions{Seed: seed, Workers: c.Int("workers"), Scale: c.Float64("scale"), Progress: bar.update})
			bar.finish()
			if err != nil {
				return err
			}
			if c.Bool("json") {
				err = cliutil.WriteJSON(c.App.Writer, rows)
			} else {
				err = experiments.WriteAuditText(c.App.Writer, rows)
			}
			if err != nil {
				return err
			}
			return experiments.AuditVerdict(rows)
		},
	}
}
