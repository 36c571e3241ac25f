package draft

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Chain drafts autoregressively from the draft model, the drafter of
// speculative decoding (Leviathan et al. 2023, arXiv 2211.17192; Chen et
// al. 2023, arXiv 2302.01318):
//
//	x_i ~ q(. | ctx, x_<i),  i = 1..γ,
//
// each by inverse CDF from one rng.Float64, stopping early when the
// policy says so. It takes one draft forward pass per token. At the empty
// context with a fixed policy it draws exactly sim.Chain's blocks (the
// block source of a model pair).
type Chain struct {
	q   sim.Model
	pol Policy
}

// NewChain returns the chain drafter over q under policy pol.
func NewChain(q sim.Model, pol Policy) (*Chain, error) {
	if q == nil {
		return nil, fmt.Errorf("drafter chain: no draft model")
	}
	if err := pol.check(); err != nil {
		return nil, err
	}
	return &Chain{q: q, pol: pol}, nil
}

// ChainName is the chain drafter's name (New).
const ChainName = "chain"

func init() {
	register(ChainName, func(c Config) (Drafter, error) {
		d, err := NewChain(c.Q, c.Policy)
		if err != nil {
			return Drafter{}, err
		}
		return Drafter{Chain: d}, nil
	})
}

// Draft writes up to gamma tokens after ctx.
func (c *Chain) Draft(rng *rand.Rand, ctx []int, gamma int, b *sim.Block, rows *Rows) {
	b.Tokens, b.Q = b.Tokens[:0], b.Q[:0]
	for i := range gamma {
		q := rows.Q(i)
		c.q.Next(append(ctx, b.Tokens...), q)
		x := sim.SampleRow(rng.Float64(), sim.F64(q))
		b.Tokens = append(b.Tokens, x)
		b.Q = append(b.Q, sim.F64(q))
		if c.pol.Stops(q[x]) {
			break
		}
	}
}

// Passes returns n: one draft forward pass per token.
func (c *Chain) Passes(n int) int { return n }
