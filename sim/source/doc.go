// Package source builds block sources from specs such as
// "dirichlet:V=32000,a=0.1,beta=0.7" or "markov:V=4,order=1,seed=7": the
// --source of every command and the source axis of sweep specs.
//
// It is an open registry. Each kind lives in one file of its own (here
// dirichlet.go, temperature.go, zipf.go and markov.go) that holds its
// config type, parses and validates its own keys, documents them, and
// registers itself in an init function (Register). Everything that takes
// a source spec goes through New, Check, Kinds and Lookup, so a new kind
// file is at once usable by check, exact, describe, list, sweeps (run),
// synthetic logs (and so replay) and the external protocol. A spec is
// handled in four steps:
//
//  1. ParseSpec splits "kind:key=value,..." into its kind and keys;
//  2. the kind's Parse reads its keys through Args (typed, with the
//     defaults its Keys document; the first bad value is remembered, and
//     a key it does not read is reported as unknown with the keys it
//     takes), and returns its Config;
//  3. Config.Check reports every parameter and memory-budget error
//     without allocating (Check), or
//  4. Config.Build draws the source from the keyed stream
//     sim.NewRand(seed, sim.StreamID("source/"+kind)) (New), so the same
//     spec and seed give the same rows at any commit that keeps the kind.
//
// The vocabulary the kinds build (sim.Pool, sim.Pair, sim.Chain,
// sim.Source) stays in package sim; this package knows no rules.
package source // import "github.com/specsim/specsim/sim/source"
