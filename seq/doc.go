// Package seq drives whole generations with speculative decoding on a
// language-model pair (package lm, or any sim.Model pair): a drafter
// proposes tokens after the current context, a verification rule (package
// algos) keeps a prefix of them and adds one token, and the context grows
// by what was emitted, until each prompt has its number of new tokens.
//
// Drafters come from package sim/draft, named by Config.Drafter: chain
// (the draft model sampled autoregressively, x_i ~ q(.|ctx, x_<i)), heads
// (Medusa-style heads, x_i ~ q_i(.|ctx)), lookup (prompt lookup decoding:
// deterministic candidates with one-hot draft rows, which token
// verification then accepts with probability p(x), the membership rule),
// the tree drafters by name, and tree: the tree drafter of the rule's
// kind, EAGLE-2's dynamic tree for rules over deterministic top-k
// children. Chains are verified by chain rules, trees by tree rules
// (package algos).
//
// Draft length policies (draft.Policy): fixed γ; conf:τ, which stops
// drafting after a token whose draft probability q_i(x_i) is below τ; and
// oracle, which is charged for exactly the accepted draft (an upper
// bound).
//
// Walltime model (Leviathan et al. 2023, Thm 3.8, generalised): with the
// target's cost for one token as the unit, a step costs
//
//	c·(draft forward passes) + 1 + v·(target rows verified - 1),
//
// and the speedup is the emitted tokens divided by the summed step costs
// (autoregressive decoding costs 1 per token). Draft passes are the chain
// drafter's own count (draft.ChainDrafter.Passes: γ for chain, 1 for
// heads, all heads in one pass, 0 for lookup's string matching) and one
// per tree layer for trees (a layer is one batched pass). With
// v = 0, the chain drafter and a fixed γ this is Leviathan's
// E[tokens]/(cγ + 1).
//
// Sequence-level losslessness: a lossless rule emits every token with the
// target's exact conditional law given the emitted prefix. The verdict
// tests that at every emitted position with two Pearson χ² tests (package
// sim/stattest), Holm-adjusted: "token", the emitted token's identity,
// grouped by the residue of the previous token modulo 4 (the context
// key), and "bucket", the emitted token's target probability on a log2
// scale. For each group and cell the expected count is the sum over
// positions of the target's probability of the cell, E = Σ_t p_t(cell).
// Under losslessness the observed-minus-expected count is a martingale
// whose covariance is Σ_t (diag p_t - p_t p_tᵀ), which is dominated by the
// multinomial covariance with the average law, so Pearson's statistic is
// stochastically no larger than its χ² reference: the test keeps its
// level (asymptotically), and is conservative when the laws vary.
package seq // import "github.com/specsim/specsim/seq"
