package check

import (
	"fmt"

	"github.com/specsim/specsim/sim"
)

// reserveMem asks the check's memory account (Config.MemBudget) for what
// its run allocates with the input before anything is allocated (issue
// 30, H4 and H5): a tally (per-state position cells, the joint, the PIT
// tables, the law test's cells) per worker plus the merged total, and,
// for tree rules, each worker's batch of draft trees (up to
// min(MaxTreeNodes, 1 + K + … + K^γ) nodes, each holding its target and
// draft rows of V float64s).
func (rn *runner) reserveMem() error {
	w, acc := rn.w, sim.NewAccountant(rn.cfg.MemBudget)
	copies := int64(sim.Workers(rn.cfg.Workers)) + 1
	cells := int64(0)
	if rn.marg {
		p := rn.pit
		cells = int64(rn.posLen) + int64(rn.jLen) + int64(2*p.g1*p.bins+p.pairs()*p.pb*p.pb+p.pb*p.pb)
		cells += int64(2*rn.shift.pb*rn.shift.pb + rn.shift.half*(rn.shift.g1+1))
		if p.cb > 0 {
			cells += int64(pow(p.cb, p.g1))
		}
	}
	if rn.lawOn {
		cells += 3 * int64(rn.lawCells())
	}
	what := fmt.Sprintf("check: the tallies (%d position cells of %d states × %d tokens × %d positions, and the joint and PIT tables; one per worker and the total: %d)",
		rn.posLen, max(w.states, w.nc), w.v, w.g+1, copies)
	if err := acc.Reserve(what, sim.MulBytes(cells, 8, copies), talliesFix); err != nil {
		return err
	}
	if rn.marg {
		if err := rn.hashed.reserve(acc, copies, rn.cfg.Batch); err != nil {
			return err
		}
	}
	if !rn.rule.isTree() {
		return nil
	}
	trees := int64(1)
	if rn.rule.TreeSteps != nil {
		trees = int64(max(rn.cfg.Batch, 1))
	}
	nodes := treeNodes(rn.rule.Draft, rn.rule.K, rn.rule.Branch, w.g)
	what = fmt.Sprintf("check: the draft trees (a batch of %d trees of up to %d nodes × %d tokens per worker, %d workers)", trees, nodes, w.v, copies-1)
	return acc.Reserve(what, sim.MulBytes(TreeBatchBytes(trees, nodes, rn.rule.K, w.v), copies-1), TreeBatchFix)
}

// talliesFix is the advice of an error about the tallies' memory.
const talliesFix = "lower --gamma or the source's size (V, order, contexts), or use fewer --workers"

// ReserveStateTallies refuses, before a model pair of states Markov
// states over v tokens is built, a losslessness check whose per-state
// position cells alone, states·v·(γ+1) counts per worker and one total,
// exceed budget (0: sim.DefaultMemBudget). It is a lower bound of what
// reserveMem asks once the pair is built, so it never refuses a check that
// would fit; it spares building a pair whose check cannot run.
func ReserveStateTallies(states, v, gamma, workers int, budget int64) error {
	copies := int64(sim.Workers(workers)) + 1
	cells := sim.MulBytes(int64(states), int64(v), int64(gamma+1))
	what := fmt.Sprintf("check: the tallies (%d position cells of %d states × %d tokens × %d positions; one per worker and the total: %d)",
		cells, states, v, gamma+1, copies)
	return sim.NewAccountant(budget).Reserve(what, sim.MulBytes(cells, 8, copies), talliesFix)
}

// TreeBatchFix is the advice of an error about TreeBatchBytes.
const TreeBatchFix = "lower --batch, --k or --gamma"

// TreeBatchBytes is the memory a batch of b draft trees of up to nodes
// nodes with k candidates over V tokens takes in the harness: every node
// holds its target and draft rows of V float64s, and its children; -1 on
// overflow. An external check asks it before starting the implementation.
func TreeBatchBytes(b, nodes int64, k, v int) int64 {
	perNode := sim.MulBytes(int64(v), 16)
	if perNode >= 0 {
		perNode += 16*int64(max(k, 1)) + 128
	}
	return sim.MulBytes(b, nodes, perNode)
}

// treeNodes bounds a draft tree's nodes, as external.MaxTreeNodes does:
// with branch per depth (not i.i.d.) 1 + b₁ + b₁b₂ + …, else k chains of
// depth γ, 1 + k·γ; at most sim.MaxTreeNodes.
func treeNodes(kind sim.DraftKind, k int, branch []int, depth int) int64 {
	if len(branch) == 0 || kind == sim.DraftIID {
		return int64(min(1+max(k, 1)*depth, sim.MaxTreeNodes))
	}
	n, level := int64(1), int64(1)
	for _, b := range branch {
		level *= int64(max(b, 1))
		if n += level; n >= sim.MaxTreeNodes || level >= sim.MaxTreeNodes {
			return sim.MaxTreeNodes
		}
	}
	return n
}
