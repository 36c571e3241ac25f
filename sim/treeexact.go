package sim

import (
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
	// drafted at the root), the multi-draft acceptance of SpecTr, Hu et
	// al. and Khisti et al.
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
// the tree form of Exact (REFERENCES §10 item 1).
func ExactTree(m Model, d Drafter, rule TreeLawer, cfg TreeExactConfig) (TreeExactResult, error) {
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
	// Count the trees first, without the target rows or the rule's law,
	// so a grid too large to enumerate is refused after the drafter's own
	// (cheap) enumeration, not after MaxExactTrees laws.
	trees := 0
	errTooMany := fmt.Errorf("exact tree: more than %d draft trees; use a smaller V, k or depth", MaxExactTrees)
	if err := d.Enumerate(cfg.Context, func(*Tree, float64) error {
		if trees++; trees > MaxExactTrees {
			return errTooMany
		}
		return nil
	}); err != nil {
		return TreeExactResult{}, err
	}
	offset := make([]int, l+2)
	for i := 0; i <= l; i++ {
		offset[i+1] = offset[i] + ipow(v, i)
	}
	mass := make([]float64, offset[l+1])
	res := TreeExactResult{V: v, Depth: depth, L: l}
	var law TreeLaw
	path := make([]int, 0, MaxTreeDepth+1)
	err := d.Enumerate(cfg.Context, func(t *Tree, w float64) error {
		res.Trees++
		if res.Trees > MaxExactTrees {
			return fmt.Errorf("exact tree: more than %d draft trees; use a smaller V, k or depth", MaxExactTrees)
		}
		t.resizeV(v)
		t.FillTarget(m, cfg.Context)
		if err := t.Check(); err != nil {
			return err
		}
		if err := rule.TreeLaw(t, &law); err != nil {
			return err
		}
		if tot := law.Total(); math.Abs(tot-1) > 1e-9 {
			return fmt.Errorf("exact tree: the rule's law sums to %.12g, not 1", tot)
		}
		root := t.Nodes[0].Kids
		for n := range t.Nodes {
			path = t.Path(path[:0], n)
			for tok := NoToken; tok < v; tok++ {
				pr := law.At(n, tok)
				if pr == 0 {
					continue
				}
				if pr < 0 {
					return fmt.Errorf("exact tree: the rule's law has a negative entry %g at (node %d, next %d)", pr, n, tok)
				}
				mw := w * pr
				seq := path
				if tok != NoToken {
					seq = append(seq, tok)
				}
				k := min(len(seq), l)
				code := 0
				for _, x := range seq[:k] {
					code = code*v + x
				}
				mass[offset[k]+code] += mw
				dep := t.Nodes[n].Depth
				res.ExpectedAccepted += mw * float64(dep)
				res.ExpectedEmitted += mw * float64(len(seq))
				if n != 0 {
					res.Acceptance += mw
					res.FirstAccepted += mw
				} else if tok != NoToken {
					for _, c := range root {
						if t.Nodes[c].Token == tok {
							res.Acceptance += mw
							break
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return TreeExactResult{}, err
	}
	res.SeqComparison = compareSeqLaws(m, cfg.Context, v, l, offset, mass)
	return res, nil
}
