// Package diag is the one vocabulary of what can go wrong, shared by the
// libraries and the two front ends (cmd/simulate, cmd/report):
//
//  1. Kinds of failure (Kind: ErrUsage, ErrIO, ErrViolated,
//     ErrInterrupted, ErrInconclusive, ErrContract), each with its exit
//     code in one table (Exit* constants, never renumbered). A library
//     marks an error with its kind (Usage, IO, Violated, Inconclusive,
//     Contract, Interrupted), or
//     declares a sentinel that carries one (New); callers test kinds with
//     errors.Is and KindOf, and internal/cliutil turns the outermost kind
//     into the exit code. An error of no kind is an internal error.
//  2. Bad named inputs (Param): "workers = -1; use 0 (all cores) or
//     more". Libraries name the field or parameter, never a command-line
//     flag; a front end shows the flag the user typed instead (Rename),
//     so the line reads "--workers = -1; use 0 (all cores) or more".
//  3. Warnings: statistical caveats and approximations that travel with a
//     result instead of failing it (Warnings, a []error that encodes to
//     JSON as a list of strings).
//
// Package sim imports no other project package, so its data conditions
// (sim.ErrBadDist, sim.ErrMemBudget) carry no kind; internal/cliutil's
// CodeOf counts them as usage errors.
//
// diag imports only the standard library and internal/escape (what it
// prints may quote input), so any package but package sim may import it.
package diag // import "github.com/specsim/specsim/internal/diag"
