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

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/internal/job"
	"github.com/specsim/specsim/sim"
)

// CodeOf maps an error to its exit code (the diag.Exit* table): its kind
// (diag.KindOf, the outermost one when marked twice), else urfave/cli's
// exit coder, else package sim's data conditions (sim imports no other
// project package, so its sentinels carry no kind: a source over the
// memory budget or a bad distribution is the user's input, usage), else a
// cancelled context (interrupted), else urfave/cli's own flag errors
// (usage; urfave/cli v2 gives them no type, so its messages are matched),
// else diag.ExitError.
func CodeOf(err error) int {
	if k := diag.KindOf(err); k != nil {
		return k.Code()
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if errors.Is(err, sim.ErrMemBudget) || errors.Is(err, sim.ErrBadDist) {
		return diag.ExitUsage
	}
	if errors.Is(err, context.Canceled) {
		return diag.ExitInterrupted
	}
	msg := err.Error()
	for _, m := range cliUsageMessages {
		if strings.Contains(msg, m) {
			return diag.ExitUsage
		}
	}
	return diag.ExitError
}

// cliUsageMessages are urfave/cli's untyped usage errors.
var cliUsageMessages = []string{"flag provided but not defined", "Required flag", "invalid value", "No help topic"}

// Run runs app on args (flags may follow positional arguments) and maps
// its error to an exit code, printing one line "<app name>: <error>" to
// stderr. It is the process boundary of both front ends:
//
//   - an error naming a field that is one of the command's flags
//     (diag.ParamError) names the flag instead (FlagNames);
//   - a flag error (an unknown or malformed flag, a missing required flag,
//     an unknown command) is one line with a pointer to --help, exit
//     diag.ExitUsage, and never the help text on stdout;
//   - SIGINT or SIGTERM ends every command with diag.ExitInterrupted
//     (job.Watchdog): one that listens stops by itself, one that does not
//     is stopped;
//   - a panic on the calling goroutine is an internal error: the stack goes
//     to a file in os.TempDir, stderr gets one line saying it is a bug and
//     naming the file, and the exit code is diag.ExitError. This recover
//     handles no error of ours (our code returns errors; nothing resumes
//     after it): it is the process boundary's crash report, because the
//     runtime's own exit status for a panic, 2, is diag.ExitUsage, and a
//     bug must not read as "you called it wrong".
func Run(app *cli.App, stderr io.Writer, args []string) (code int) {
	app.ExitErrHandler = func(*cli.Context, error) {}
	oneLineUsage(app)
	stop := job.Watchdog(stderr, app.Name, diag.ExitInterrupted)
	defer stop()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(stderr, crashLine(app.Name, r, debug.Stack()))
			code = diag.ExitError
		}
	}()
	err := app.Run(Interspersed(app, args))
	if err == nil {
		return diag.ExitOK
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", app.Name, escape.Clip(escape.Terminal(oneLine(msg)), escape.MaxLine))
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
	return fmt.Sprintf("%s: internal error (a bug in %s, not in your input): %s; %s; please report it with that file", name, name, escape.Terminal(firstLine(fmt.Sprint(r))), where)
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
		return diag.Usage(fmt.Errorf("%v; see '%s --help'", err, app.Name))
	}
	if app.Action == nil {
		app.Action = func(c *cli.Context) error {
			if c.Args().Present() {
				return diag.Usage(fmt.Errorf("unknown command %q; see '%s --help'", c.Args().First(), app.Name))
			}
			return cli.ShowAppHelp(c)
		}
	}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			full := path + " " + cmd.Name
			if act := cmd.Action; act != nil {
				cmd.Action = func(c *cli.Context) error { return FlagNames(c, act(c)) }
			}
			cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
				return diag.Usage(fmt.Errorf("%v; see '%s --help'", err, full))
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
							return diag.Usage(fmt.Errorf("missing --%s; see '%s --help'", n, full))
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

// FlagNames returns err with each field or parameter it names
// (diag.ParamError) that is also the name of a flag of the running
// command, its parents or the app shown as that flag, as the user typed
// it: "workers = -1; …" becomes "--workers = -1; …" ("-k" for a
// one-letter flag). Libraries name fields, never flags; Run applies
// FlagNames to the error of every command's Action, so the front ends
// need not. A name that is no flag stays as it is (a spec's field).
func FlagNames(c *cli.Context, err error) error {
	if err == nil {
		return nil
	}
	flags := map[string]bool{}
	add := func(fs []cli.Flag) {
		for _, f := range fs {
			for _, n := range f.Names() {
				flags[n] = true
			}
		}
	}
	for _, l := range c.Lineage() {
		if l.Command != nil {
			add(l.Command.Flags)
		}
	}
	if c.App != nil {
		add(c.App.Flags)
	}
	return diag.Rename(err, func(name string) (string, bool) {
		if !flags[name] {
			return "", false
		}
		if len(name) == 1 {
			return "-" + name, true
		}
		return "--" + name, true
	})
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
