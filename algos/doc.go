// Package algos holds the acceptance rules (verifiers) of speculative
// decoding, one file per rule, each citing its paper with its formulas, and
// the mutants: rules with planted bugs, kept apart in mutants.go and used as
// negative controls that every check must flag.
//
// Every rule implements sim.Algorithm; rules whose outcome law is
// computable also implement sim.Lawer, which the exact engine uses. Rules
// are registered by name with their parameters (Register, Lookup, All), so
// commands and sweeps build them from strings. To add a rule: write its
// file with a doc comment citing the paper, implement Accept (and Law where
// possible), register it in an init function, and add it to the law and
// exact tests in algos_test.go.
//
// A rule whose decision at a position is a pass over the vocabulary (an
// entropy, a divergence, a sorted solve) may keep it per row pair in a
// rowCache (rowcache.go, decidecache.go), found by the rows' bytes: a
// pool's rows recur at every step. A kept decision is the one the rule
// computed, so outcomes and laws do not change; nothing is kept or served
// while a benchmark runs (sim.BeginTiming).
//
// This package does no I/O.
package algos // import "github.com/specsim/specsim/algos"
