// Package check decides statistically whether an acceptance rule preserves
// the target law, with stated power, and checks the edge cases no sampling
// test can see.
//
// A statistical check runs in four steps:
//
//  1. Trials: trial t draws a draft from the source with its own keyed
//     stream and runs the rule with another (common random numbers: every
//     rule sees the same drafts for the same seed); when the step emits
//     fewer than γ+1 tokens the rest are sampled from the target, so every
//     trial yields the first γ+1 tokens of the sequence.
//  2. Cells: for a positional pool (large synthetic vocabularies) the law
//     of the i-th token in context c is the pool's row p_{c,i}; tokens are
//     grouped into bins of equal target mass after sorting them by p/q, so
//     the bins separate the tokens a biased rule over- and under-emits. For
//     a small model pair the cells are the tokens themselves: the first
//     token, the first two jointly, and the whole first γ+1.
//  3. Tests: one chi-squared test per position (pools) or per joint
//     (model pairs), exact p-values, sparse cells pooled, Holm's correction
//     across the tests.
//  4. Verdict: "violated" when the smallest Holm-adjusted p-value is below
//     the level, else "preserved", reported with the minimum TV distance
//     the first test detects at that level and power.
//
// EdgeCheck runs a rule with scripted coins (exactly 0, and just below 1)
// on blocks built to expose inclusive comparisons.
package check // import "github.com/specsim/specsim/sim/check"
