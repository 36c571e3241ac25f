package draft

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Argmax drafts greedily from the draft model, x_i = argmax q(.|ctx, x_<i),
// with one-hot rows (the draft is deterministic given the context). One
// draft pass per token.
type Argmax struct{ q sim.Model }

func init() {
	register("argmax", func(c Config) (Drafter, error) {
		if c.Q == nil {
			return Drafter{}, fmt.Errorf("drafter argmax: no draft model")
		}
		return Drafter{Chain: &Argmax{c.Q}}, nil
	})
}

// Draft writes gamma greedy tokens after ctx.
func (a *Argmax) Draft(_ *rand.Rand, ctx []int, gamma int, b *sim.Block, rows *Rows) {
	b.Tokens, b.Q = b.Tokens[:0], b.Q[:0]
	for i := range gamma {
		q := rows.Q(i)
		a.q.Next(append(ctx, b.Tokens...), q)
		x := sim.ArgmaxRow(sim.F64(q))
		clear(q)
		q[x] = 1
		b.Tokens = append(b.Tokens, x)
		b.Q = append(b.Q, sim.F64(q))
	}
}

// Passes returns n.
func (a *Argmax) Passes(n int) int { return n }
