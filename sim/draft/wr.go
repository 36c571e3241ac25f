package draft

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// DraftWR is the kind of the with-replacement expansion drafter (WR),
// registered here so that sim needs no edit.
var DraftWR = sim.RegisterDraftKind("wr", true)

// WR drafts SpecInfer's expansion-based token tree with stochastic
// sampling (Miao et al. 2023, arXiv 2305.09781, §3, the expansion
// configuration ⟨k_1, ..., k_m⟩): every node at depth i draws Branch[i]
// tokens i.i.d. from the draft model,
//
//	x_j ~ q(. | path),  j = 1..Branch[i],
//
// with replacement, so a token drawn twice is one child whose Draws entry
// appears twice; each distinct child then draws its own Branch[i+1]
// tokens. Every node's draws are i.i.d. from q given its path, the
// condition under which the rules lossless for DraftIID (specinfer, kseq)
// verify it losslessly; `simulate exact --draft wr` proves it on a small
// pair. Kind DraftWR.
type WR struct{ *branching }

// NewWR returns the with-replacement drafter over q with branch[i] draws
// per node at depth i (branch nil: k draws at the root, then chains, to
// depth).
func NewWR(q sim.Model, k, depth int, branch []int) (*WR, error) {
	b, err := newBranching(DraftWR, q, k, depth, branch, wr{})
	if err != nil {
		return nil, err
	}
	return &WR{b}, nil
}

func init() {
	registerTree(DraftWR.String(), treeTraits{branches: true, drawn: true, repeats: true}, func(c Config) (Drafter, error) {
		d, err := NewWR(c.Q, c.K, c.Depth, c.Branch)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// wr chooses children with replacement.
type wr struct{}

func (wr) draw(rng *rand.Rand, t *sim.Tree, n int, q []float64, b int) {
	for range b {
		t.AddDraw(n, sim.SampleRow(rng.Float64(), sim.F64(q)))
	}
}

// each enumerates the ordered b-tuples of draws at node n, x next with
// probability q(x).
func (wr) each(t *sim.Tree, n int, q []float64, b int, w float64, next func(float64) error) error {
	if b == 0 {
		return next(w)
	}
	for x, qx := range q {
		if qx <= 0 {
			continue
		}
		created := t.Child(n, x) < 0
		t.AddDraw(n, x)
		err := wr{}.each(t, n, q, b-1, w*qx, next)
		t.UndoDraw(n, created)
		if err != nil {
			return err
		}
	}
	return nil
}

// logWays: s^b ordered draws.
func (wr) logWays(s, b int) float64 { return float64(b) * math.Log(float64(s)) }
