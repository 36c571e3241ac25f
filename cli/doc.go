// Package cli is the simulate command line as a library: Main and Run
// execute it, Register adds a subcommand. A program in another module gets
// the whole command line with
//
//	func main() { os.Exit(cli.Main()) }
//
// and its own acceptance rules, registered with algos.Register in an init
// function, are then available to every command (list, exact, check,
// bench, audit, ...), as Caddy's and benchstat's entry points work; see
// examples/gorule. cmd/simulate is that program for this repository's
// rules. (Its files use urfave/cli, whose package is also named cli;
// programs importing both name one of them.)
package cli // import "github.com/specsim/specsim/cli"
