// Command simulate runs acceptance rules of speculative decoding on target
// and draft distribution pairs and judges them: exact enumeration, powered
// statistical checks, benchmarks, the losslessness audit and named
// experiments. Every command that prints results has a --json form.
//
// Examples:
//
//	$ simulate list
//	$ simulate exact --algo token --p 1/3,2/3 --q 2/3,1/3 --gamma 2 --json
//	$ simulate check --algo token --source dirichlet:V=32000,a=0.1,beta=0.7 --gamma 4 --trials 200000 --seed 1 --json
//	$ simulate bench --algo token --vocab 32000 --gamma 4 --seconds 5 --json
//	$ simulate audit
//
// Exit codes are the constants of internal/cliutil; they are never renumbered.
package main

import (
	"io"
	"os"
	"sort"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"
)

func main() {
	os.Exit(run(os.Stdout, os.Stderr, os.Args))
}

// commandFuncs collects the constructors of the subcommands; each command's
// file registers its own in init. Commands and their flags are built fresh
// for every app, so state never leaks between runs in one process.
var commandFuncs []func() *cli.Command

func register(f func() *cli.Command) { commandFuncs = append(commandFuncs, f) }

func newApp(stdout, stderr io.Writer) *cli.App {
	var cmds []*cli.Command
	for _, f := range commandFuncs {
		cmds = append(cmds, f())
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return &cli.App{
		Name:      "simulate",
		Usage:     "run and judge acceptance rules of speculative decoding",
		Commands:  cmds,
		Writer:    stdout,
		ErrWriter: stderr,
	}
}

// run executes the app and maps its error to an exit code, printing one
// line "simulate: <error>" to stderr. Exit codes are the constants of
// internal/cliutil; they are never renumbered.
func run(stdout, stderr io.Writer, args []string) int {
	return cliutil.Run(newApp(stdout, stderr), stderr, args)
}
