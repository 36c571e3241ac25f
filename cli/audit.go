package cli

import (
	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/diag"

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
			ctx, stop := signalContext(c.Context)
			defer stop()
			bar := newProgress(c.App.ErrWriter, int64(experiments.AuditRules()), "rules")
			rows, err := experiments.RunAudit(ctx, experiments.AuditOptions{Seed: seed, Workers: c.Int("workers"), Scale: c.Float64("scale"), Progress: bar.update, Log: c.App.ErrWriter})
			bar.finish()
			if err != nil && len(rows) == 0 {
				return err
			}
			// Interrupted: the finished rules' rows are printed, then the error.
			var werr error
			if c.Bool("json") {
				werr = cliutil.WriteJSON(c.App.Writer, rows)
			} else {
				werr = experiments.WriteAuditText(c.App.Writer, rows)
			}
			switch {
			case err != nil:
				return err
			case werr != nil:
				return diag.IO(werr)
			}
			return experiments.AuditVerdict(rows)
		},
	}
}
