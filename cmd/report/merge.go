package main

import (
	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/report"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "check and merge every cell file under DIR into one parquet table",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "merged table `FILE` (default DIR/merged.parquet)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON with stable field names"},
			&cli.BoolFlag{Name: "rows", Usage: "also print the merged rows (JSON: field table)"},
		},
		Action: func(c *cli.Context) error {
			dir, err := cliutil.OneArg(c, "directory (the --out DIR of 'simulate run')")
			if err != nil {
				return err
			}
			s, err := report.Merge(dir, c.String("out"), c.Bool("rows"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return cliutil.WriteJSON(c.App.Writer, s)
			}
			return s.WriteText(escape.TerminalWriter(c.App.Writer))
		},
	}
}
