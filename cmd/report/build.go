package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/report"
)

// writesFiles gives cmd, a command that takes one results directory, the
// Action that calls write on it and prints the files written, one a line
// (also those written before it failed).
func writesFiles(cmd *cli.Command, write func(c *cli.Context, dir string) ([]string, error)) *cli.Command {
	cmd.Action = func(c *cli.Context) error {
		dir, err := cliutil.OneArg(c, "results directory (the --out of 'report reproduce')")
		if err != nil {
			return err
		}
		files, err := write(c, dir)
		for _, f := range files {
			fmt.Fprintln(c.App.Writer, f)
		}
		return err
	}
	return cmd
}

func buildCommand() *cli.Command {
	return writesFiles(&cli.Command{
		Name:      "build",
		Usage:     "write figures (PNG, SVG, PDF), tables (Markdown, LaTeX, CSV) and report.md from a results directory",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output `DIR` (default: the results directory)"},
		},
	}, func(c *cli.Context, dir string) ([]string, error) {
		return report.BuildDir(dir, c.String("out"))
	})
}

func paperCommand() *cli.Command {
	return writesFiles(&cli.Command{
		Name:      "paper",
		Usage:     "regenerate the paper's figures, tables and numbers from a results directory (and build the PDF with --pdf)",
		ArgsUsage: "RESULTS",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "paper", Usage: "paper `DIR` (paper.tex is written there if absent; inputs go to DIR/generated)"},
			&cli.BoolFlag{Name: "pdf", Usage: "run latexmk and fail on missing figures or references"},
		},
	}, func(c *cli.Context, dir string) ([]string, error) {
		files, err := report.Paper(c.Context, dir, c.String("out"), c.Bool("pdf"))
		if err == nil && c.Bool("pdf") {
			// a PDF with a box too wide is still written; say what is wrong
			for _, p := range report.LayoutProblems(c.String("out")) {
				fmt.Fprintf(c.App.ErrWriter, "paper: %s\n", p)
			}
		}
		return files, err
	})
}
