package main

import (
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
			in, err := cliutil.OneArg(c, "parquet file (e.g. results/runs/multidraft/merged.parquet)")
			if err != nil {
				return err
			}
			return report.ExportFile(c.App.Writer, in, c.String("format"), c.String("out"))
		},
	}
}
