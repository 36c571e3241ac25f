package cliutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/job"
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

// Usage, IO, Violated and Interrupted mark an error with its kind
// (job.ErrUsage, …), which fixes the exit code; they are job's.
var (
	Usage        = job.Usage
	IO           = job.IO
	Violated     = job.Violated
	Interrupted  = job.Interrupted
	Inconclusive = job.Inconclusive
)

// kindCodes maps the kinds of failure to exit codes.
var kindCodes = []struct {
	kind error
	code int
}{{job.ErrUsage, ExitUsage}, {job.ErrIO, ExitIO}, {job.ErrViolated, ExitViolated}, {job.ErrInterrupted, ExitInterrupted}, {job.ErrInconclusive, ExitInconclusive}}

// CodeOf maps an error to its exit code: its kind (the outermost one when
// marked twice), else urfave/cli's exit coder, else a cancelled context
// (interrupted), else urfave/cli's own flag errors (usage; urfave/cli v2
// gives them no type, so its messages are matched), else ExitError.
func CodeOf(err error) int {
	if k := job.Kind(err); k != nil {
		for _, kc := range kindCodes {
			if k == kc.kind {
				return kc.code
			}
		}
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	msg := err.Error()
	for _, m := range cliUsageMessages {
		if strings.Contains(msg, m) {
			return ExitUsage
		}
	}
	return ExitError
}

// cliUsageMessages are urfave/cli's untyped usage errors.
var cliUsageMessages = []string{"flag provided but not defined", "Required flag", "invalid value", "No help topic"}

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
