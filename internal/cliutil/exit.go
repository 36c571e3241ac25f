package cliutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes of simulate and report. Scripts depend on them: never
// renumber.
const (
	// ExitOK: the command ran and, for checks, found what was expected.
	ExitOK = 0
	// ExitError: an unexpected internal failure.
	ExitError = 1
	// ExitUsage: bad flags or bad input (a malformed distribution, source,
	// parameter or spec). Nothing was computed.
	ExitUsage = 2
	// ExitViolated: a check ran and found the target law violated
	// ('check'), or the audit found a verdict other than expected.
	ExitViolated = 3
	// ExitInterrupted: stopped by SIGINT/SIGTERM; finished results were
	// reported or kept.
	ExitInterrupted = 4
	// ExitIO: reading or writing a file failed.
	ExitIO = 5
	// ExitInconclusive: a check ran and found no violation, but some of
	// its tests had no power (no degrees of freedom, or too few trials to
	// detect even a total deviation); rerun with more trials.
	ExitInconclusive = 6
)

type exitErr struct {
	code int
	err  error
}

func (e exitErr) Error() string { return e.err.Error() }
func (e exitErr) Unwrap() error { return e.err }
func (e exitErr) ExitCode() int { return e.code }

// Usage, IO, Violated and Interrupted wrap an error with its exit code.
func Usage(err error) error { return exitErr{ExitUsage, err} }

// IO marks a file that could not be read or written.
func IO(err error) error { return exitErr{ExitIO, err} }

// Violated marks a check that found the target law violated.
func Violated(err error) error { return exitErr{ExitViolated, err} }

// Inconclusive marks a check whose tests could not decide.
func Inconclusive(err error) error { return exitErr{ExitInconclusive, err} }

// Interrupted marks a run stopped by a signal.
func Interrupted(err error) error { return exitErr{ExitInterrupted, err} }

// CodeOf maps an error to its exit code; urfave/cli's flag errors are
// usage errors.
func CodeOf(err error) int {
	var e exitErr
	if errors.As(err, &e) {
		return e.code
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	msg := err.Error()
	if strings.Contains(msg, "flag provided but not defined") || strings.Contains(msg, "Required flag") ||
		strings.Contains(msg, "invalid value") || strings.Contains(msg, "No help topic") {
		return ExitUsage
	}
	return ExitError
}

// Run runs app on args (flags may follow positional arguments) and maps
// its error to an exit code, printing one line "<app name>: <error>" to
// stderr.
func Run(app *cli.App, stderr io.Writer, args []string) int {
	app.ExitErrHandler = func(*cli.Context, error) {}
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return Usage(err) }
	err := app.Run(Interspersed(app, args))
	if err == nil {
		return ExitOK
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", app.Name, msg)
	}
	return CodeOf(err)
}
