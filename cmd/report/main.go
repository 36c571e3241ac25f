// Command report merges and summarises the results of sharded sweeps
// written by 'simulate run NAME|SPEC --out DIR'.
//
// Examples:
//
//	$ report merge /scratch/sweep                     # check, merge to DIR/merged.parquet, print a summary
//	$ report merge /scratch/sweep --out table.parquet --json
//
// report --version prints the module version, VCS revision and Go version
// from the build information.
//
// Exit codes match simulate's (internal/diag): 0 ok, 1 internal error, 2
// usage or bad input, 4 interrupted, 5 I/O (an unreadable file, missing
// cells, files of different sweeps, or duplicates that disagree).
package main

import (
	"io"
	"os"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/gitrev"
	"github.com/specsim/specsim/sim"

	"github.com/urfave/cli/v2"
)

func main() { os.Exit(run(os.Stdout, os.Stderr, os.Args)) }

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "report",
		Usage:     "merge sweep results; build figures, tables, report.md and the paper; the main job (reproduce)",
		Version:   gitrev.Current().String(), // --version: from the build info, not the working directory
		Commands:  []*cli.Command{mergeCommand(), reproduceCommand(), buildCommand(), exportCommand(), paperCommand()},
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{&cli.Float64Flag{Name: "mem-budget", EnvVars: []string{"SPECSIM_MEM_BUDGET"},
			Value: float64(sim.DefaultMemBudget) / (1 << 30),
			Usage: "most memory in GiB one results table may take once read; give it before the command: report --mem-budget 16 merge ..."}},
		Before: func(c *cli.Context) error {
			b, err := cliutil.MemBudget(c.Float64("mem-budget"))
			if err != nil {
				return err
			}
			results.SetMemBudget(b)
			return nil
		},
	}
}

// run executes the app and maps its error to an exit code, printing one
// line "report: <error>" to stderr.
func run(stdout, stderr io.Writer, args []string) int {
	return cliutil.Run(newApp(stdout, stderr), stderr, args)
}
