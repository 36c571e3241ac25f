// Package resolve turns a check named the way the command line names it
// into the objects the verdict engine (package sim/check) runs: it looks
// rules and conformance laws up in the algos registry, builds them with
// their parameters, parses draft kinds, and builds the source through the
// source registry (package sim/source). Run then calls check.Check.
//
// Name resolution lives here, above sim/check and algos, so that sim/check
// imports only sim and sim/stattest; front ends (cli, external) call
// resolve.
package resolve // import "github.com/specsim/specsim/resolve"
