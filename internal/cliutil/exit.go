package cliutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/job"
	"github.com/specsim/specsim/sim"
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
// marked twice), else urfave/cli's exit coder, else sim's data conditions
// (ErrMemBudget, ErrBadDist: usage), else a cancelled context
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
	// Data conditions of package sim, which knows no exit codes: a source
	// over the memory budget or a bad distribution is the user's input.
	if errors.Is(err, sim.ErrMemBudget) || errors.Is(err, sim.ErrBadDist) {
		return ExitUsage
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
// stderr. It is the process boundary of both front ends:
//
//   - a flag error (an unknown or malformed flag, a missing required flag,
//     an unknown command) is one line with a pointer to --help, exit
//     ExitUsage, and never the help text on stdout;
//   - a panic on the calling goroutine is an internal error: the stack goes
//     to a file in os.TempDir, stderr gets one line saying it is a bug and
//     naming the file, and the exit code is ExitError.
func Run(app *cli.App, stderr io.Writer, args []string) (code int) {
	app.ExitErrHandler = func(*cli.Context, error) {}
	oneLineUsage(app)
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(stderr, crashLine(app.Name, r, debug.Stack()))
			code = ExitError
		}
	}()
	err := app.Run(Interspersed(app, args))
	if err == nil {
		return ExitOK
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", app.Name, oneLine(msg))
	}
	return CodeOf(err)
}

// crashLine writes the panic value and stack to a new file in os.TempDir
// and returns the one line that reports the crash.
func crashLine(name string, r any, stack []byte) string {
	where := "the stack could not be saved"
	f, err := os.CreateTemp("", name+"-crash-*.txt")
	if err == nil {
		_, werr := fmt.Fprintf(f, "%s %s: panic: %v\n\n%s", name, strings.Join(os.Args[1:], " "), r, stack)
		if cerr := f.Close(); werr == nil && cerr == nil {
			where = "details in " + f.Name()
		}
	}
	return fmt.Sprintf("%s: internal error (a bug in %s, not in your input): %s; %s; please report it with that file", name, name, firstLine(fmt.Sprint(r)), where)
}

// firstLine returns s up to its first newline, with " …" when more
// followed: an error is reported on one line.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// oneLine joins the lines of a multi-line error with "; ".
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// oneLineUsage makes every usage error of app one line with a pointer to
// --help: urfave/cli v2 prints the whole help text to stdout on a flag
// error, a missing required flag and an unknown command.
func oneLineUsage(app *cli.App) {
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return Usage(fmt.Errorf("%v; see '%s --help'", err, app.Name))
	}
	if app.Action == nil {
		app.Action = func(c *cli.Context) error {
			if c.Args().Present() {
				return Usage(fmt.Errorf("unknown command %q; see '%s --help'", c.Args().First(), app.Name))
			}
			return cli.ShowAppHelp(c)
		}
	}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			full := path + " " + cmd.Name
			cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
				return Usage(fmt.Errorf("%v; see '%s --help'", err, full))
			}
			var required []string
			for _, f := range cmd.Flags {
				if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
					if clearRequired(f) {
						required = append(required, f.Names()[0])
					}
				}
			}
			if len(required) > 0 {
				before := cmd.Before
				cmd.Before = func(c *cli.Context) error {
					for _, n := range required {
						if !c.IsSet(n) {
							return Usage(fmt.Errorf("missing --%s; see '%s --help'", n, full))
						}
					}
					if before != nil {
						return before(c)
					}
					return nil
				}
			}
			walk(full, cmd.Subcommands)
		}
	}
	walk(app.Name, app.Commands)
}

// clearRequired clears the Required field that every urfave/cli v2 flag
// type has (the types share no setter, so it is set by name) and reports
// whether f had one.
func clearRequired(f cli.Flag) bool {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	r := v.Elem().FieldByName("Required")
	if r.Kind() != reflect.Bool || !r.CanSet() {
		return false
	}
	r.SetBool(false)
	return true
}
