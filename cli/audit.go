package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/experiments"
)

func init() { register(auditCommand) }

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "the main job: every rule and mutant, exact and statistical verdicts, α and E[emitted], as one table",
		Flags: []cli.Flag{seedFlag(), workersFlag(0), jsonFlag(),
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "multiply the statistical trial count (100000)"}},
		Action: func(c *cli.Context) error {
			if s := c.Float64("scale"); !(s > 0) {
				return cliutil.Usage(fmt.Errorf("--scale = %g; use a positive factor", s))
			}
			e, err := experiments.Lookup("audit")
			if err != nil {
				return err
			}
			seed := masterSeed(c)
			fmt.Fprintf(c.App.ErrWriter, "simulate: audit, seed %d; exact pairs, then %s (gamma 4)\n", seed, experiments.AuditSource)
			ctx, stop := signalContext(c.Context)
			defer stop()
			cells, _ := e.Cells(experiments.Config{})
			bar := newProgress(c.App.ErrWriter, int64(len(cells)), "rules")
			var rows []experiments.Row
			for i, cell := range cells {
				cfg := experiments.Config{Seed: seed, Workers: c.Int("workers"), Scale: c.Float64("scale")}
				rs, err := e.Run(ctx, cfg, cell, experiments.CellSeed(seed, e.Name, cell))
				if err != nil {
					if ctx.Err() != nil {
						return cliutil.Interrupted(fmt.Errorf("interrupted after %d of %d rules", i, len(cells)))
					}
					return err
				}
				for _, r := range rs {
					rows = append(rows, experiments.Prefix(e.Name, cell, append(r, experiments.KV{K: "seed", V: int64(seed)})))
				}
				bar.update(int64(i+1), int64(len(cells)))
			}
			bar.finish()
			if c.Bool("json") {
				if err := cliutil.WriteJSON(c.App.Writer, rows); err != nil {
					return err
				}
			} else {
				printAudit(c, rows)
			}
			var bad []string
			for _, r := range rows {
				if ok, _ := r.Get("ok"); ok != true {
					bad = append(bad, fmt.Sprintf("%s %s: %s, expected %s", r.String("algorithm"), r.String("params"), r.String("verdict"), r.String("expected")))
				}
			}
			if len(bad) > 0 {
				return cliutil.Violated(fmt.Errorf("audit: %d verdicts differ from expectation: %s", len(bad), strings.Join(bad, "; ")))
			}
			return nil
		},
	}
}

func printAudit(c *cli.Context, rows []experiments.Row) {
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ALGORITHM\tPARAMS\tKIND\tEXACT\tMAX_ERR\tSTAT\tP\tEDGE\tALPHA\tE[EMIT]\tVERDICT\tOK")
	for _, r := range rows {
		f := func(k string) string {
			v, _ := r.Float(k)
			return fmt.Sprintf("%.3g", v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\n", r.String("algorithm"), r.String("params"), r.String("kind"),
			r.String("exact_verdict"), f("max_abs_error"), r.String("statistical_verdict"), f("p_value"), r.String("edge_verdict"),
			f("alpha_hat"), f("mean_emitted"), r.String("verdict"), r.String("ok"))
	}
	tw.Flush()
}
