package draft

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Greedy drafts a tree whose every node at depth i gets the Branch[i]−1
// most likely tokens of the draft model and one more token drawn from q
// restricted to the rest:
//
//	children(path) = T ∪ {x},  T = argtop_{b−1} q(. | path),
//	Pr(x) = q(x) / (1 − Σ_{t∈T} q(t))  for x ∉ T,
//
// the greedy multi-draft of Hu et al. 2025 (arXiv 2502.18779), whose
// optimal verifier is rule greedy-draft; kind sim.DraftGreedy. When q has
// at most b tokens with q > 0 they are all children and nothing is drawn.
type Greedy struct{ *branching }

// NewGreedy returns the greedy drafter over q with branch[i] children per
// node at depth i (branch nil: k children of the root, then chains, to
// depth).
func NewGreedy(q sim.Model, k, depth int, branch []int) (*Greedy, error) {
	b, err := newBranching(sim.DraftGreedy, q, k, depth, branch, greedy{})
	if err != nil {
		return nil, err
	}
	return &Greedy{b}, nil
}

func init() {
	registerTree(sim.DraftGreedy.String(), treeTraits{branches: true, drawn: true}, func(c Config) (Drafter, error) {
		d, err := NewGreedy(c.Q, c.K, c.Depth, c.Branch)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// greedy chooses the top b−1 tokens and one sampled from the rest.
type greedy struct{}

func (greedy) draw(rng *rand.Rand, t *sim.Tree, n int, q []float64, b int) {
	s := stateOf(t)
	sup := sim.Support(q)
	s.order = sim.TopTokens(s.order[:0], q, min(b-1, sup-1))
	rest := 1.0
	for _, x := range s.order {
		t.AddDraw(n, x)
		rest -= q[x]
	}
	if len(s.order) < sup {
		t.AddDraw(n, sampleExcluding(rng.Float64()*rest, q, t, n))
	}
}

func (greedy) each(t *sim.Tree, n int, q []float64, b int, w float64, next func(float64) error) error {
	sup := sim.Support(q)
	top := sim.TopTokens(nil, q, min(b-1, sup-1))
	rest := 1.0
	for _, x := range top {
		t.AddDraw(n, x)
		rest -= q[x]
	}
	var err error
	if len(top) == sup {
		err = next(w)
	} else {
		for x, qx := range q {
			if qx <= 0 || t.Child(n, x) >= 0 {
				continue
			}
			t.AddDraw(n, x)
			err = next(w * qx / rest)
			t.UndoDraw(n, true)
			if err != nil {
				break
			}
		}
	}
	for range top {
		t.UndoDraw(n, true)
	}
	return err
}

// logWays: s−b+1 choices of the drawn child (none when b covers s).
func (greedy) logWays(s, b int) float64 {
	if b < s {
		return math.Log(float64(s - b + 1))
	}
	return 0
}
