// Command gorule is the specsim command line with one more rule, written
// in this module: a Go sampler author's way to run every specsim command
// (check, exact, bench, audit, ...) on their rule without forking the
// repository.
//
//	$ go build -o gorule . && ./gorule check --algo my-token --source dirichlet:V=1000 --seed 1
package main

import (
	"os"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/cli"
	"github.com/specsim/specsim/sim"
)

func init() {
	algos.Register(algos.Entry{
		Info: algos.Info{Name: "my-token", Summary: "token verification written outside the specsim module",
			Paper: "Leviathan et al., arXiv 2211.17192, Algorithm 1"},
		New: func(algos.Params) (sim.Algorithm, error) { return myToken{}, nil },
	})
}

func main() { os.Exit(cli.Main()) }
