package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/report"
)

// resultsDir is the argument of build and paper.
const resultsDir = "results directory (the --out of 'report reproduce')"

// printFiles prints the files a command wrote, one a line (also those
// written before it failed), and returns its error.
func printFiles(w io.Writer, files []string, err error) error {
	for _, f := range files {
		fmt.Fprintln(w, f)
	}
	return err
}

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "write figures (PNG, SVG, PDF), tables (Markdown, LaTeX, CSV) and report.md from a results directory",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output `DIR` (default: the results directory)"},
		},
		Action: func(c *cli.Context) error {
			dir, err := cliutil.OneArg(c, resultsDir)
			if err != nil {
				return err
			}
			files, err := report.BuildDir(dir, c.String("out"))
			return printFiles(c.App.Writer, files, err)
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
			dir, err := cliutil.OneArg(c, resultsDir)
			if err != nil {
				return err
			}
			files, err := report.Paper(c.Context, dir, c.String("out"), c.Bool("pdf"))
			return printFiles(c.App.Writer, files, err)
		},
	}
}
