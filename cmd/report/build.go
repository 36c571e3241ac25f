package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/report"
)

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "write figures (PNG, SVG, PDF), tables (Markdown, LaTeX, CSV) and report.md from a results directory",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output `DIR` (default: the results directory)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cliutil.Usage(fmt.Errorf("build needs one results directory (the --out of 'report reproduce')"))
			}
			files, err := report.BuildDir(c.Args().First(), c.String("out"))
			for _, f := range files {
				fmt.Fprintln(c.App.Writer, f)
			}
			return err
		},
	}
}

func paperCommand() *cli.Command {
	return &cli.Command{
		Name:      "paper",
		Usage:     "regenerate the paper's figures, tables and numbers from a results directory (and build the PDF with --pdf)",
		ArgsUsage: "RESULTS",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "paper", Usage: "paper `DIR` (paper.tex is written there if absent; inputs go to DIR/generated)"},
			&cli.BoolFlag{Name: "pdf", Usage: "run latexmk and fail on missing figures or references"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cliutil.Usage(fmt.Errorf("paper needs one results directory (the --out of 'report reproduce')"))
			}
			files, err := report.Paper(c.Context, c.Args().First(), c.String("out"), c.Bool("pdf"))
			for _, f := range files {
				fmt.Fprintln(c.App.Writer, f)
			}
			return err
		},
	}
}
