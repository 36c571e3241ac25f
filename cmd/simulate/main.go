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
// simulate --version prints the module version, VCS revision and Go version
// from the build information.
//
// Exit codes are the diag.Exit* constants of internal/diag; they are never
// renumbered.
package main

import (
	"os"

	"github.com/specsim/specsim/cli"
)

func main() { os.Exit(cli.Main()) }
