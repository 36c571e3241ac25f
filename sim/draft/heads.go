package draft

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Heads drafts with Medusa-style heads (Cai et al. 2024, arXiv
// 2401.10774): head i predicts position i from the context alone, so the
// tokens are drawn independently in one forward pass,
//
//	x_i ~ h_i(. | ctx),  i = 1..γ,
//
// each by inverse CDF from one rng.Float64, stopping early when the policy
// says so. This is the chain (top-1 sampled) form of Medusa's heads; its
// static tree of the heads' top-k is TopK's kind.
type Heads struct {
	heads []sim.Model
	pol   Policy
}

// NewHeads returns the heads drafter; it drafts at most len(heads) tokens.
func NewHeads(heads []sim.Model, pol Policy) (*Heads, error) {
	if len(heads) == 0 {
		return nil, fmt.Errorf("drafter heads: no heads; give one model per drafted position")
	}
	for i, h := range heads {
		if h == nil {
			return nil, fmt.Errorf("drafter heads: head %d has no model", i)
		}
	}
	if err := pol.check(); err != nil {
		return nil, err
	}
	return &Heads{heads: heads, pol: pol}, nil
}

// HeadsName is the heads drafter's name (New).
const HeadsName = "heads"

func init() {
	register(HeadsName, func(c Config) (Drafter, error) {
		if len(c.Heads) < c.Depth {
			return Drafter{}, fmt.Errorf("drafter heads needs %d heads, has %d", c.Depth, len(c.Heads))
		}
		d, err := NewHeads(c.Heads, c.Policy)
		if err != nil {
			return Drafter{}, err
		}
		return Drafter{Chain: d}, nil
	})
}

// Draft writes up to min(gamma, heads) tokens after ctx.
func (h *Heads) Draft(rng *rand.Rand, ctx []int, gamma int, b *sim.Block, rows *Rows) {
	b.Tokens, b.Q = b.Tokens[:0], b.Q[:0]
	for i := range min(gamma, len(h.heads)) {
		q := rows.Q(i)
		h.heads[i].Next(ctx, q)
		x := sim.SampleRow(rng.Float64(), sim.F64(q))
		b.Tokens = append(b.Tokens, x)
		b.Q = append(b.Q, sim.F64(q))
		if h.pol.Stops(q[x]) {
			break
		}
	}
}

// Passes returns 1 for any draft (all heads run in one pass), 0 for none.
func (h *Heads) Passes(n int) int { return min(1, n) }
