// Package run is the round loop of specsim: the one place where a
// speculative step is drafted, verified and handed to the caller.
//
// A round is one speculative step:
//
//	source ──► drafter ──► verifier(s) ──► recorder
//
// A ChainDrafter fills a sim.Block (one draft chain with its rows) or a
// TreeDrafter fills a sim.Tree; each Verifier of the Loop — a chain rule
// (sim.Algorithm), a tree rule (sim.TreeAlgorithm) or a batch stepper
// (sim.Stepper, such as an external implementation) — decides the round;
// the caller's recorder sees the Round and keeps only its accumulators
// and metrics. Rounds runs n rounds on all cores through sim.MonteCarlo;
// a Worker runs single rounds or units for loops that are not
// trial-indexed (whole sequences, timed benchmarks, replayed logs).
//
// Randomness comes from one vocabulary of stream roles (Role): Source
// (which context a round is in), Draft (the draft tokens), Coins (the
// verifier's own randomness) and Continuation (tokens sampled after the
// step, for tests that need a fixed number of tokens). Rounds are grouped
// into units of Loop.Batch rounds; the generator of role r in unit u is
// sim.NewRand(seed, keys(r, u)), and roles whose keys are equal share one
// generator, drawn in the order the loop uses them (drafting, then
// verifying, then recording). Named gives the harness's one naming,
// sim.StreamID(name+"/"+role, u). Every number therefore depends on the
// seed and the unit's identity only, never on the worker count.
//
// Several verifiers on one Loop see the same drafts, each with the Coins
// stream started afresh (common random numbers), so paired comparisons
// such as block vs token verification differ only by the rule.
package run // import "github.com/specsim/specsim/sim/run"
