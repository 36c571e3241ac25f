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
	// MaxAbsError is max_s |π(s) - p(s)| over the V^L sequences of the
	// first L emitted tokens (continued with the target after the step).
	MaxAbsError float64
	// TV, KL and KLReverse compare the sequence laws: TV(p, π), KL(p‖π),
	// KL(π‖p) in nats.
	TV, KL, KLReverse float64
	// Lossless is MaxAbsError < ExactTol.
	Lossless bool
	// First and TargetFirst are the laws of the first emitted token;
	// FirstTV is their total variation distance.
	First, TargetFirst []float64
	FirstTV            float64
	// Emitted and Target are the sequence laws over V^L (base-V codes,
	// first token most significant).
	Emitted, Target []float64
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
		rule.TreeLaw(t, &law)
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
	tgt := make([]float64, len(mass))
	tgt[0] = 1
	row := make([]float64, v)
	seq := make([]int, 0, len(cfg.Context)+l)
	for dd := 0; dd < l; dd++ {
		for code := 0; code < ipow(v, dd); code++ {
			i := offset[dd] + code
			if mass[i] == 0 && tgt[i] == 0 {
				continue
			}
			seq = appendDigits(append(seq[:0], cfg.Context...), code, dd, v)
			m.Next(seq, row)
			child := offset[dd+1] + code*v
			for t, pt := range row {
				mass[child+t] += mass[i] * pt
				tgt[child+t] += tgt[i] * pt
			}
		}
	}
	res.Emitted = mass[offset[l]:offset[l+1]]
	res.Target = tgt[offset[l]:offset[l+1]]
	res.First = Marginal(res.Emitted, v, l, 0)
	res.TargetFirst = Marginal(res.Target, v, l, 0)
	res.FirstTV = TV(res.TargetFirst, res.First)
	for s, pt := range res.Target {
		res.MaxAbsError = math.Max(res.MaxAbsError, math.Abs(res.Emitted[s]-pt))
	}
	res.TV = TV(res.Target, res.Emitted)
	res.KL = KL(res.Target, res.Emitted)
	res.KLReverse = KL(res.Emitted, res.Target)
	res.Lossless = res.MaxAbsError < ExactTol
	return res, nil
}
