// Package layers states the project's import layering: every package
// stands on a floor (Floors), and a package imports only packages on
// floors below its own, so no import points up. Its test parses the
// imports of every non-test Go file of the module and fails on an import
// that points sideways or up, and on a package that has no floor (a new
// package must be placed). The architecture page (docs/architecture.md)
// draws the same floors.
package layers // import "github.com/specsim/specsim/internal/layers"

// Floors maps each package (its path inside the module) to its floor; 0
// is the ground.
var Floors = map[string]int{
	// the ground: packages that import no project package
	"internal/escape": 0, "internal/gitrev": 0, "internal/job": 0, "internal/longtest": 0,
	"internal/layers": 0, "internal/lint": 0, "internal/clitest": 0, "internal/memcap": 0, "paper": 0, "notebooks": 0,
	"internal/binenc": 0, // the binary payloads of states (sim/check's shards)
	"data/samples":    0, "data/results/bombtest": 0,
	// the vocabulary: the model's (sim), failures' (diag, which escapes
	// what it prints) and rows' (table, which escapes what it renders)
	"sim": 1, "internal/diag": 1, "table": 1,
	// engines on the vocabulary: statistics, the round loop, sources;
	// file plumbing
	"sim/stattest": 2, "sim/run": 2, "sim/source": 2, "internal/fsutil": 2, "internal/pooltest": 2,
	// the case study's committed results and its table (read by report)
	"casestudy": 2,
	// drafters, the verdict engine; language models (their cache is a
	// file); result files
	"sim/draft": 3, "sim/check": 3, "lm": 3, "data/results": 3, "internal/statefile": 3,
	// the rules
	"algos": 4,
	// logs; figures; what the front ends share
	"data": 5, "plots": 5, "internal/cliutil": 5,
	// names resolved into values (and a check's report page); whole
	// sequences, and SMC over them (its verdict is sim/check's assembly)
	"resolve": 6, "seq": 6, "smc": 6,
	// the external protocol
	"external": 7,
	// named experiments, then the sweep runner
	"experiments":       8,
	"experiments/sweep": 9,
	// the front ends as libraries, and the main job
	"report": 10, "cli": 10,
	// programs
	"cmd/report": 11, "cmd/simulate": 11, "data/samples/gen": 11,
}
