package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data"
)

func init() { register(importLogCommand) }

func importLogCommand() *cli.Command {
	return &cli.Command{
		Name:  "import-log",
		Usage: "convert the JSON-lines output of data/logger/logger.py (written when pyarrow is absent) into a parquet log",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "in", Usage: "JSON lines, one row of the log schema per line; the same as the positional FILE"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output parquet log"},
			&cli.StringFlag{Name: "writer", Value: "data/logger/logger.py (via simulate import-log)", Usage: "provenance: the writer"},
			&cli.StringFlag{Name: "source", Usage: "provenance: the model pair"},
			&cli.Uint64Flag{Name: "seed", Usage: "provenance: the logged run's seed"},
		},
		ArgsUsage: "FILE",
		Action: func(c *cli.Context) error {
			in, err := fileArg(c, "in")
			if err != nil {
				return err
			}
			pv := data.BuildProvenance(c.String("writer"), c.String("source"), c.Uint64("seed"))
			n, err := data.ImportFile(in, c.String("out"), pv, memBudget(c))
			if err != nil {
				return logErr(err)
			}
			fmt.Fprintf(c.App.Writer, "wrote %s: %d rows\n", c.String("out"), n)
			return nil
		},
	}
}
