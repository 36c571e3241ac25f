// Command report merges and summarises the results of sharded sweeps
// written by 'simulate run NAME|SPEC --out DIR'.
//
// Examples:
//
//	$ report merge /scratch/sweep                     # check, merge to DIR/merged.parquet, print a summary
//	$ report merge /scratch/sweep --out table.parquet --json
//
// Exit codes match simulate's: 0 ok, 1 internal error, 2 usage or bad
// input, 4 interrupted, 5 I/O (an unreadable file, missing cells, files of
// different sweeps, or duplicates that disagree).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes of report, the same numbers as simulate's. Never renumber.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitInterrupted = 4
	ExitIO          = 5
)

type exitErr struct {
	code int
	err  error
}

func (e exitErr) Error() string { return e.err.Error() }
func (e exitErr) Unwrap() error { return e.err }

func usageErr(err error) error { return exitErr{ExitUsage, err} }
func ioErr(err error) error    { return exitErr{ExitIO, err} }

func codeOf(err error) int {
	var e exitErr
	if errors.As(err, &e) {
		return e.code
	}
	msg := err.Error()
	if strings.Contains(msg, "flag provided but not defined") || strings.Contains(msg, "Required flag") ||
		strings.Contains(msg, "invalid value") || strings.Contains(msg, "No help topic") {
		return ExitUsage
	}
	return ExitError
}

func main() { os.Exit(run(os.Stdout, os.Stderr, os.Args)) }

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:           "report",
		Usage:          "merge sweep results; build figures, tables, report.md and the paper; the main job (reproduce)",
		Commands:       []*cli.Command{mergeCommand(), reproduceCommand(), buildCommand(), exportCommand(), paperCommand()},
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErr(err)
		},
	}
}

// run executes the app and maps its error to an exit code, printing one
// line "report: <error>" to stderr.
func run(stdout, stderr io.Writer, args []string) int {
	err := newApp(stdout, stderr).Run(args)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "report: %s\n", err)
	return codeOf(err)
}
