package sim

import (
	"context"
	"fmt"
	"math"
)

// MaxExactTrees bounds the number of trees ExactTree enumerates.
const MaxExactTrees = 1 << 22

// TreeExactConfig sets up an exact enumeration over draft trees.
type TreeExactConfig struct {
	// L is the number of emitted tokens whose joint law is compared; 0
	// means depth+1, everything one step can emit.
	L int
	// Context is the prefix before the step.
	Context []int
}

// TreeExactResult reports ExactTree.
type TreeExactResult struct {
	V, Depth, L int
	// Trees is the number of distinct draft trees enumerated.
	Trees int
	// Acceptance is Pr(the first emitted token is among the tokens
	// drafted at the root), RootAccepted's definition.
	Acceptance float64
	// FirstAccepted is Pr(the accepted node is below the root): a drafted
	// token was accepted as such. It can be below Acceptance for rules
	// that may emit a drafted token as a correction (K-SEQ's residual,
	// a rule verifying only some candidates).
	FirstAccepted float64
	// ExpectedAccepted is E[depth of the accepted node] and
	// ExpectedEmitted = ExpectedAccepted + Pr(a token follows) per step.
	ExpectedAccepted, ExpectedEmitted float64
	SeqComparison
}

// ExactTree enumerates every tree the drafter can build after the context,
// weighs each by its probability, fills the target rows of m, combines the
// tree with the rule's TreeLaw, continues with the target after the step,
// and compares the law of the first L emitted tokens with the target's:
// the tree form of Exact (docs/architecture.md).
func ExactTree(m Model, d Drafter, rule TreeLawer, cfg TreeExactConfig) (TreeExactResult, error) {
	return ExactTreeContext(context.Background(), m, d, rule, cfg)
}

// ExactTreeContext is ExactTree stopping with ctx.Err() when ctx is
// cancelled. Before enumerating it estimates the number of trees
// (estimateTrees) and refuses at once when that exceeds MaxExactTrees.
func ExactTreeContext(ctx context.Context, m Model, d Drafter, rule TreeLawer, cfg TreeExactConfig) (TreeExactResult, error) {
	v := m.Vocab()
	depth := d.Depth()
	l := cfg.L
	if l == 0 {
		l = depth + 1
	}
	if l < 1 {
		return TreeExactResult{}, fmt.Errorf("exact tree: L = %d; compare at least one token", l)
	}
	if ipow(v, l) > MaxExactLeaves {
		return TreeExactResult{}, fmt.Errorf("exact tree: V = %d with L = %d is too large to enumerate (V^L <= %d); use a smaller vocabulary or depth", v, l, MaxExactLeaves)
	}
	for _, c := range cfg.Context {
		if c < 0 || c >= v {
			return TreeExactResult{}, fmt.Errorf("exact tree: context token %d outside the vocabulary [0, %d)", c, v)
		}
	}
	if n := estimateTrees(d, cfg.Context); n > MaxExactTrees {
		return TreeExactResult{}, fmt.Errorf("exact tree: about %.3g draft trees to enumerate, more than %d; use a smaller V, k, branching or depth, or 'simulate check'", n, MaxExactTrees)
	}
	seqs := newSeqMass(v, l)
	res := TreeExactResult{V: v, Depth: depth, L: l}
	var law TreeLaw
	path := make([]int, 0, MaxTreeDepth+1)
	err := d.Enumerate(cfg.Context, func(t *Tree, w float64) error {
		res.Trees++
		if res.Trees%ctxEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if res.Trees > MaxExactTrees {
			return fmt.Errorf("exact tree: more than %d draft trees; use a smaller V, k or depth", MaxExactTrees)
		}
		t.FillTarget(m, cfg.Context)
		if err := t.Check(); err != nil {
			return err
		}
		if err := rule.TreeLaw(t, &law); err != nil {
			return err
		}
		if tot := law.Total(); !(math.Abs(tot-1) <= 1e-9) { // NaN too: never a verdict
			return fmt.Errorf("exact tree: the rule's law sums to %.12g, not 1", tot)
		}
		for n := range t.Nodes {
			path = t.Path(path[:0], n)
			for tok := NoToken; tok < v; tok++ {
				pr := law.At(n, tok)
				if pr == 0 {
					continue
				}
				if !(pr >= 0) { // negative or NaN
					return fmt.Errorf("exact tree: the rule's law has a negative entry %g at (node %d, next %d)", pr, n, tok)
				}
				mw := w * pr
				seqs.add(path, tok, mw)
				emitted := len(path)
				if tok != NoToken {
					emitted++
				}
				res.ExpectedAccepted += mw * float64(t.Nodes[n].Depth)
				res.ExpectedEmitted += mw * float64(emitted)
				if RootAccepted(t, TreeOutcome{Node: n, Next: tok}) {
					res.Acceptance += mw
				}
				if DraftAccepted(TreeOutcome{Node: n, Next: tok}) {
					res.FirstAccepted += mw
				}
			}
		}
		return nil
	})
	if err != nil {
		return TreeExactResult{}, err
	}
	if res.SeqComparison, err = seqs.compare(ctx, m, cfg.Context); err != nil {
		return TreeExactResult{}, err
	}
	return res, nil
}

// estimateTrees is d's own estimate of the trees it enumerates after ctx
// (TreeCounter), 1 for a drafter without one.
func estimateTrees(d Drafter, ctx []int) float64 {
	if c, ok := d.(TreeCounter); ok {
		return c.EstimateTrees(ctx)
	}
	return 1
}
