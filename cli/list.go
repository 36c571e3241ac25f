package cli

import (
	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/cliutil"
)

func init() { register(listCommand) }

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the acceptance rules and mutants, their parameters, strict points, and whether each has a law",
		Flags: []cli.Flag{jsonFlag(),
			&cli.BoolFlag{Name: "markdown", Usage: "print the README's rule table (markdown)"}},
		Action: func(c *cli.Context) error {
			ds, err := algos.Catalog()
			switch {
			case err != nil:
				return err
			case c.Bool("json"):
				return cliutil.WriteJSON(c.App.Writer, ds)
			case c.Bool("markdown"):
				return algos.WriteMarkdown(c.App.Writer, ds)
			}
			return algos.WriteText(c.App.Writer, ds)
		},
	}
}
