package cli

import (
	"io"
	"os"
	"sort"

	"github.com/specsim/specsim/sim"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/gitrev"

	"github.com/urfave/cli/v2"
)

// Main runs the command line on os.Args with os.Stdout and os.Stderr and
// returns the exit code (the diag.Exit* constants of internal/diag): a
// program's main is os.Exit(cli.Main()).
func Main() int {
	return Run(os.Stdout, os.Stderr, os.Args)
}

// Run executes the command line args (args[0] is the program name) and
// maps its error to an exit code, printing one line "<program>: <error>"
// to stderr. Exit codes are the diag.Exit* constants of internal/diag;
// they are never renumbered.
func Run(stdout, stderr io.Writer, args []string) int {
	return run(stdout, stderr, args)
}

// Register adds a subcommand. f builds the command afresh for every run,
// so state never leaks between runs in one process; call it from an init
// function, before Main.
func Register(f func() *cli.Command) { register(f) }

// commandFuncs collects the constructors of the subcommands; each command's
// file registers its own in init. Commands and their flags are built fresh
// for every app, so state never leaks between runs in one process.
var commandFuncs []func() *cli.Command

func register(f func() *cli.Command) { commandFuncs = append(commandFuncs, f) }

// NewApp builds the simulate app, its commands and flags built afresh,
// writing to stdout and stderr. Run executes it with simulate's exit codes;
// NewApp is for inspecting it, as the docs test does with its commands and
// flags.
func NewApp(stdout, stderr io.Writer) *cli.App { return newApp(stdout, stderr) }

func newApp(stdout, stderr io.Writer) *cli.App {
	var cmds []*cli.Command
	for _, f := range commandFuncs {
		cmds = append(cmds, f())
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return &cli.App{
		Name:      "simulate",
		Usage:     "run and judge acceptance rules of speculative decoding",
		Version:   gitrev.Current().String(), // --version: from the build info, not the working directory
		Commands:  cmds,
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{&cli.Float64Flag{Name: "mem-budget", EnvVars: []string{"SPECSIM_MEM_BUDGET"},
			Value: float64(sim.DefaultMemBudget) / (1 << 30),
			Usage: "most memory in GiB one source may take (pools, model pairs, log rows); give it before the command: simulate --mem-budget 16 check ..."}},
		Before: func(c *cli.Context) error {
			if _, err := cliutil.MemBudget(c.Float64("mem-budget")); err != nil {
				return err
			}
			results.SetMemBudget(memBudget(c)) // every results table read
			return nil
		},
	}
}

// memBudget returns the app's --mem-budget in bytes (its Before has
// checked it): the MemBudget every config and option that builds a
// source or reads a log is given.
func memBudget(c *cli.Context) int64 {
	b, _ := cliutil.MemBudget(c.Float64("mem-budget"))
	return b
}

// run executes the app and maps its error to an exit code, printing one
// line "simulate: <error>" to stderr.
func run(stdout, stderr io.Writer, args []string) int {
	return cliutil.Run(newApp(stdout, stderr), stderr, args)
}
