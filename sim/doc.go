// Package sim holds the vocabulary and the engines of specsim: distributions
// and their maths, blocks and outcomes of one speculative step, model pairs
// and positional pools (the source kinds that build them from specs are
// package sim/source), keyed random streams, the Monte Carlo driver and the
// exact enumeration engine. Memory budgets are explicit values (CheckMem),
// passed down by whoever builds a source.
//
// The data flow of one speculative step is
//
//  1. a source yields the target rows p and the draft rows q (a model pair
//     p(.|prefix), q(.|prefix), or a positional pool of synthetic rows);
//  2. a drafter samples the draft tokens x_i ~ q_i (a chain, or a Tree
//     drawn by a Drafter; package sim/draft holds the drafters);
//  3. an Algorithm (a verifier, see package algos) maps the Block to an
//     Outcome: how many draft tokens are kept and the one token it adds;
//  4. metrics and verdicts come from outcomes (Monte Carlo) or from each
//     rule's Law (exact enumeration, see Exact).
//
// Randomness is always explicit: every function that consumes it takes a
// *rand.Rand (math/rand/v2) as its first argument, and streams are keyed by
// identity (NewRand, StreamID), so results do not depend on worker count or
// scheduling. A seed reproduces a result only at the same commit.
//
// sim imports no other package of this project.
package sim // import "github.com/specsim/specsim/sim"
