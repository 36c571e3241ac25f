// Package sweep runs the named experiments of package experiments as
// sweeps: what 'simulate run', 'simulate slurm' and the main job do with
// an experiment's cells.
//
//  1. A Spec names an experiment and the axes of its grid (a TOML file,
//     ParseSpec; or the experiment's own cells, DefaultSpec).
//  2. NewPlan expands it with a master seed into a Plan: the cells, in
//     order, each seeded by experiments.CellSeed.
//  3. Plan.Run computes the cells a Shard owns, several at once, skipping
//     those a Store already holds and saving each as it finishes, so an
//     interrupted sweep resumes (OpenStore: a data/results sweep
//     directory); MergeDir merges the stored cells into one table.
//  4. Execute is the whole of 'simulate run' (spec, seed read-back, shard
//     from flags or the environment, locks, store, progress), and Slurm
//     writes and submits the array job that runs the shards and the merge.
//
// Because a cell's seed depends only on the master seed and the cell's
// key, any shard or worker count gives the same rows.
package sweep // import "github.com/specsim/specsim/experiments/sweep"
