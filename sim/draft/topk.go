package draft

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// TopK drafts a tree whose every node at depth i gets as children the
// Branch[i] most likely tokens of the draft model, deterministically:
//
//	children(path) = argtop_{Branch[i]} q(. | path)   (ties to the lowest token),
//
// the static trees of Medusa (Cai et al. 2024, arXiv 2401.10774) and
// EAGLE-2's candidates (Li et al. 2024, arXiv 2406.16858); kind
// sim.DraftTopK. It draws no randomness.
type TopK struct{ *branching }

// NewTopK returns the top-k drafter over q with branch[i] children per
// node at depth i (branch nil: k children of the root, then chains, to
// depth).
func NewTopK(q sim.Model, k, depth int, branch []int) (*TopK, error) {
	b, err := newBranching(sim.DraftTopK, q, k, depth, branch, topk{})
	if err != nil {
		return nil, err
	}
	return &TopK{b}, nil
}

func init() {
	registerTree(sim.DraftTopK.String(), treeTraits{branches: true, drawn: true}, func(c Config) (Drafter, error) {
		d, err := NewTopK(c.Q, c.K, c.Depth, c.Branch)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// topk chooses the most likely tokens.
type topk struct{}

func (topk) draw(_ *rand.Rand, t *sim.Tree, n int, q []float64, b int) {
	s := stateOf(t)
	s.order = sim.TopTokens(s.order[:0], q, b)
	for _, x := range s.order {
		t.AddDraw(n, x)
	}
}

func (topk) each(t *sim.Tree, n int, q []float64, b int, w float64, next func(float64) error) error {
	top := sim.TopTokens(nil, q, b)
	for _, x := range top {
		t.AddDraw(n, x)
	}
	err := next(w)
	for range top {
		t.UndoDraw(n, true)
	}
	return err
}

// logWays: one choice.
func (topk) logWays(int, int) float64 { return 0 }
