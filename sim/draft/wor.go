package draft

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// WOR drafts a tree whose every node at depth i gets Branch[i] children
// drawn from the draft model without replacement, one at a time:
//
//	x_j ~ q(. | path) restricted to the tokens not yet drawn at the node,
//	Pr(x_j = x) = q(x) / (1 − Σ_{l<j} q(x_l)),
//
// which is the law of the Gumbel-top-k sample. These are the drafts of
// recursive speculative decoding (RSD; Jeon et al. 2024, arXiv 2402.14160)
// and of EAGLE-1's sampled trees; kind sim.DraftWOR.
type WOR struct{ *branching }

// NewWOR returns the without-replacement drafter over q with branch[i]
// children per node at depth i (branch nil: k children of the root, then
// chains, to depth).
func NewWOR(q sim.Model, k, depth int, branch []int) (*WOR, error) {
	b, err := newBranching(sim.DraftWOR, q, k, depth, branch, wor{})
	if err != nil {
		return nil, err
	}
	return &WOR{b}, nil
}

func init() {
	registerTree(sim.DraftWOR.String(), treeTraits{branches: true, drawn: true}, func(c Config) (Drafter, error) {
		d, err := NewWOR(c.Q, c.K, c.Depth, c.Branch)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// wor chooses children without replacement.
type wor struct{}

func (wor) draw(rng *rand.Rand, t *sim.Tree, n int, q []float64, b int) {
	b = min(b, sim.Support(q))
	rest := 1.0
	for range b {
		x := sampleExcluding(rng.Float64()*rest, q, t, n)
		rest -= q[x]
		t.AddDraw(n, x)
	}
}

func (wor) each(t *sim.Tree, n int, q []float64, b int, w float64, next func(float64) error) error {
	return worEach(t, n, q, min(b, sim.Support(q)), 1, w, next)
}

// worEach enumerates the ordered draws without replacement of b children
// at node n: x next with probability q(x)/rest.
func worEach(t *sim.Tree, n int, q []float64, b int, rest, w float64, next func(float64) error) error {
	if b == 0 {
		return next(w)
	}
	for x, qx := range q {
		if qx <= 0 || t.Child(n, x) >= 0 {
			continue
		}
		t.AddDraw(n, x)
		// Children of n are appended after the nodes already pending, so
		// the recursion visits them later in breadth-first order.
		err := worEach(t, n, q, b-1, rest-qx, w*qx/rest, next)
		t.UndoDraw(n, true)
		if err != nil {
			return err
		}
	}
	return nil
}

// logWays: s!/(s−b)! ordered draws.
func (wor) logWays(s, b int) float64 {
	per := 0.0
	for j := 0; j < b; j++ {
		per += math.Log(float64(s - j))
	}
	return per
}
