// Package plots draws the report's figures from result tables with
// gonum/plot (gonum.org/v1/plot).
//
// Every function is pure: it takes the rows of one experiment (as written
// by 'simulate run' and read back by data/results) and returns a Figure,
// which renders to PNG, SVG or PDF at a paper column's width (ColumnWidth,
// 3.3 in). Each algorithm has one colour and one marker (StyleOf), shared
// by every figure; parameter series (α, c, β) use a sequential palette
// (Seq). Legends are drawn in a strip above the panels, never over data.
//
// Figures:
//
//   - Tokens (leviathan-tokens): E[tokens per step] vs γ for several α,
//     Leviathan et al.'s Eq. 1 (lines) beside the exact engine (markers).
//   - Walltime (leviathan-walltime): walltime improvement (Thm 3.8) vs γ
//     for several cost ratios c at one α, the best γ marked.
//   - BlockVsToken (block-vs-token): E[emitted per step] vs γ for token and
//     block verification with 95% bands, and block's relative gain vs the
//     measured draft quality β.
//   - LossyFrontier (lossy-frontier): acceptance vs KL(p‖π) per lossy rule.
//   - Multidraft (multidraft): acceptance vs k per verifier with the
//     optimal bounds.
//   - Replay (replay): per-position α histogram and emitted tokens per
//     step by rule (when the replay experiment is present).
package plots // import "github.com/specsim/specsim/plots"
