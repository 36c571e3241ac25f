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
// This package does no I/O.
package algos // import "github.com/specsim/specsim/algos"
