// Package check decides statistically whether an acceptance rule preserves
// the target law, with stated power, and checks the edge cases no sampling
// test can see.
//
// Check drives a Rule — a chain Stepper (the harness's rules through
// AlgorithmStepper, or an external implementation in verify or step mode)
// or a tree rule with its drafter (kind, k candidates, branching) — on a
// source, in five steps:
//
//  1. Trials: the rounds run through the round loop (package sim/run),
//     a Stepper getting Config.Batch steps per call (an external
//     implementation answers a batch per round trip). The steps of batch
//     u draw from the streams of unit u of run.Named("check"): drafts
//     from the draft stream, the rule's coins from the coins stream and
//     the continuation from the continuation stream, so results are
//     bit-identical for any worker count (common random numbers: every
//     rule sees the same drafts for the same seed). When a step emits
//     fewer than γ+1
//     tokens the rest are sampled from the target, so every trial yields
//     the first γ+1 tokens.
//  2. Lossless tests. On a positional pool the law of the i-th token in
//     context c is the row p_{c,i}, and positions are independent: one
//     chi-squared test per position (tokens of each (context, position)
//     sorted by p/q and grouped into equal-mass bins, the contexts pooled
//     as groups of one table), and one dependence test of the joint of
//     all positions, each coarsely binned, against the product law, per
//     context. On a model pair, one test per position of the emitted
//     token given the target's state (the last `order` tokens,
//     sim.Markov.State): one table per position with a group per state,
//     which together cover the whole emitted law; plus the full joint of
//     the first γ+1 tokens where V^(γ+1) ≤ 65536 cells (sparse cells
//     pooled). On every source, the PIT tests of pit.go, and the tests
//     of each position given its context and prefix in cells re-drawn
//     every epoch (hashed.go), which no fixed arrangement of mass can
//     hide inside.
//  3. Law test: each step's outcome against an exact conditional law given
//     that step's drafts (stattest.Hetero, a control-variate test). With
//     the rule's own law it is the sampler-vs-law test, which ties the
//     rule's Law to its sampler on every block the source produces; with
//     Rule.Conform it is the conformance test against a named rule
//     ("implements rule R", not "lossless") and runs alone.
//     Each group of tests is a test family (Family, one file each:
//     poolbins.go, pairstates.go, pit.go, shift.go, hashed.go, law.go,
//     each registering itself with registerFamily in its init): its
//     state counts the rounds, merges, serialises, and yields its tests.
//  4. Holm's correction across the tests (Evaluate, the one assembly,
//     which package seq uses too); each test's minimum detectable
//     TV is computed at its Holm share Level/m, with power Power, and
//     named for the quantity it bounds.
//  5. Verdict: violated if any Holm-adjusted p-value is below the level,
//     an outcome is invalid (it breaks sim.CheckOutcome; in the lossless
//     tests, it emits a token of target probability 0; in step mode, the
//     Stepper drafted a token of draft probability 0), or the edge cases
//     fail;
//     inconclusive if none fails but some test could not detect even a
//     total deviation (no degrees of freedom or too few trials); else
//     preserved.
//
// A check can run in shards (Config.Shard of Config.Shards, CheckState):
// each runs a contiguous range of the units (ShardRange) and keeps its
// merged tallies in a State, which MarshalBinary writes (versioned, with
// a checksum) and UnmarshalState reads; Merge combines every shard's
// state into the Result the one-process Check gives, statistic for
// statistic (the floating-point sums are exact: stattest.ExactSum).
//
// EdgeCheck runs a chain rule with scripted coins (exactly 0, and just
// below 1) on blocks built to expose inclusive comparisons.
package check // import "github.com/specsim/specsim/sim/check"
