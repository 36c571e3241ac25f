package sweep

import (
	"strconv"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/table"
)

// Manifest is the identity of p's sweep as a sweep directory records it.
func (p *Plan) Manifest() results.Manifest {
	return results.Manifest{Experiment: p.Exp.Name, SpecHash: p.Spec.Hash(), Spec: p.Spec.Canonical(), Seed: p.Seed, Cells: len(p.Cells)}
}

// OpenStore opens (creating or checking) the sweep directory dir for plan
// p's cells owned by shard; the result is the Store of Options.
func OpenStore(dir string, p *Plan, shard Shard) (*results.Dir, error) {
	return results.OpenDir(dir, p.Manifest(), shard.String())
}

// MergeDir merges the cell files under dir (results.Merge), naming any
// missing cells by their keys.
func MergeDir(dir string) (results.Table, results.MergeReport, error) {
	return results.MergeNamed(dir, planCells)
}

// planCells expands the spec and seed a table's metadata records into the
// sweep's cells, or nil when they cannot be expanded.
func planCells(meta results.Meta) []table.Cell {
	s, err := SpecFromCanonical(meta[results.KeySpec])
	if err != nil {
		return nil
	}
	seed, err := strconv.ParseUint(meta[results.KeySeed], 10, 64)
	if err != nil {
		return nil
	}
	p, err := NewPlan(s, seed)
	if err != nil {
		return nil
	}
	return p.Cells
}
