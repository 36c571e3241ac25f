package cli

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/diag"
)

func init() { register(validateLogCommand) }

func validateLogCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate-log",
		Usage:     "check a log file: schema, shapes, values and decoding; exit 2 for invalid content, 5 for an unreadable file",
		ArgsUsage: "FILE",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "max-problems", Value: 10, Usage: "list at most this many problems"},
			&cli.StringFlag{Name: "log", Usage: "the log; the same as the positional FILE (as in replay)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			path, err := fileArg(c, "log")
			if err != nil {
				return err
			}
			out, res := data.Validate(path, c.Int("max-problems"), memBudget(c))
			if err := printResult(c, out, func(w io.Writer) {
				if out.Valid {
					fmt.Fprintf(w, "%s: valid, %d rows in %d row groups (writer %q, source %q)\n", path, out.Rows, out.RowGroups,
						out.Provenance["writer"], out.Provenance["source"])
				}
				for _, p := range out.Problems {
					fmt.Fprintf(w, "%s: %s\n", path, p)
				}
			}); err != nil {
				return diag.IO(err)
			}
			if res != nil {
				return logErr(res)
			}
			return nil
		},
	}
}
