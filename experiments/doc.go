// Package experiments holds the named experiments of specsim (each
// reproducing a paper's table or figure, or comparing rules) and the
// losslessness audit; each experiment declares how its rows are computed
// and what the report shows of them. The sweep runner that executes them
// (specs, plans, shards, the store, resume, Slurm) is package
// experiments/sweep.
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
//  3. The runner concatenates the rows of every cell in cell order (an
//     experiment may instead compute its rows Whole, in one call).
//  4. Figures, Tables and Numbers declare what the report (package report)
//     draws, tabulates and quotes from the merged rows, each with the
//     function that makes it; the report iterates over the declarations.
//
// Rows are tidy: one per (cell, rule, replicate), the cell's parameters
// first, then metric columns with their confidence intervals.
package experiments // import "github.com/specsim/specsim/experiments"
