// Package experiments holds the named experiments of specsim (each
// reproducing a paper's table or figure, or comparing rules), the losslessness
// audit, and the runner that executes them.
//
// An experiment is a plain function of its configuration, split into
// cells:
//
//  1. Cells lists the cells of the experiment for a Config (a grid over
//     sources, rules, γ, draft quality, ...); each cell is identified by its
//     ordered key/value parameters (Cell.Key).
//  2. Run computes one cell's rows from the Config and the cell's seed,
//     which CellSeed derives from the master seed and the cell's key alone,
//     so a cell's numbers do not depend on which process, shard or worker
//     computes it, nor in what order.
//  3. The runner concatenates the rows of every cell in cell order.
//
// Rows are tidy: one per (cell, rule, replicate), the cell's parameters
// first, then metric columns with their confidence intervals.
package experiments // import "github.com/specsim/specsim/experiments"
