package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/report"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a parquet results file as CSV or JSON (for tools without a parquet reader)",
		ArgsUsage: "FILE.parquet",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "csv", Usage: "csv or json"},
			&cli.StringFlag{Name: "out", Usage: "output `FILE` (default stdout)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cliutil.Usage(fmt.Errorf("export needs one parquet file (e.g. results/runs/multidraft/merged.parquet)"))
			}
			return report.ExportFile(c.App.Writer, c.Args().First(), c.String("format"), c.String("out"))
		},
	}
}
