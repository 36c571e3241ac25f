// Package plots draws the report's figures from result tables with
// gonum/plot (gonum.org/v1/plot).
//
// Every function is pure: it takes the rows of one experiment (as written
// by 'simulate run' and read back by data/results) and returns a Figure,
// which renders to PNG, SVG or PDF at a paper column's width (ColumnWidth,
// 3.3 in). SVG and PDF are vector: the SVG embeds the TrueType font
// (Liberation), the PDF draws text as the font's glyph outlines, so Greek
// letters survive both (gonum's PDF font encoding has none). Each
// algorithm has one colour and one marker (StyleOf), shared by every
// figure; parameter series (α, c, β) use a sequential palette (Seq).
// NamedStyles exports them for other tools (notebooks/styles.json), and
// ColourDistance (CIEDE2000) is the test's measure of distinct colours.
// Legends are drawn in a strip above the panels, never over data; x
// ranges are padded so no marker or tick label is clipped.
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
//   - LossyFrontier (lossy-frontier): small multiples, one panel per lossy
//     rule: acceptance vs KL(p‖π) over mentored decoding's frontier, KL = 0
//     in its own column, coincident settings counted.
//   - Multidraft (multidraft): acceptance vs k per verifier with the
//     optimal bounds.
//   - Replay (replay): one α histogram per draft position (small
//     multiples) and emitted tokens per step by rule, lossy rules marked
//     (when the replay experiment is present).
package plots // import "github.com/specsim/specsim/plots"
