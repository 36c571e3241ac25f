package draft

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
)

// Chains is a chain drafter as the round loop's drafter after a context
// the caller grows (a generation): each round drafts up to γ tokens after
// the context with the drafter, then fills the target rows
// p(.|ctx, x_<i), i = 1..len+1. It is also a sim.BlockSource (Next) whose
// Commit appends what a step emitted. A Chains is not safe for concurrent
// use; use one per worker.
type Chains struct {
	d      ChainDrafter
	target sim.Model
	gamma  int
	ctx    *[]int
	rows   Rows
	passes int
}

// ChainRounds returns the round drafter of d after *ctx, drafting up to
// gamma tokens and filling the rows of target. The caller owns *ctx and
// may append to it between rounds (or call Commit).
func ChainRounds(d ChainDrafter, target sim.Model, gamma int, ctx *[]int) *Chains {
	return &Chains{d: d, target: target, gamma: gamma, ctx: ctx, rows: Rows{V: target.Vocab()}}
}

// DraftChain drafts round r from its Draft stream.
func (c *Chains) DraftChain(r *run.Round, dst *sim.Block) error {
	return c.Next(r.Rand(run.Draft), dst)
}

// Next drafts the next step after the context into dst (its slices are
// reused; its rows are c's storage, valid until the next call) and fills
// its target rows.
func (c *Chains) Next(rng *rand.Rand, dst *sim.Block) error {
	ctx := *c.ctx
	c.d.Draft(rng, ctx, c.gamma, dst, &c.rows)
	c.passes = c.d.Passes(len(dst.Tokens))
	dst.P = dst.P[:0]
	for i := 0; i <= len(dst.Tokens); i++ {
		p := c.rows.P(i)
		c.target.Next(append(ctx, dst.Tokens[:i]...), p)
		dst.P = append(dst.P, sim.F64(p))
	}
	return nil
}

// Commit appends the tokens a step emitted to the context.
func (c *Chains) Commit(b *sim.Block, o sim.Outcome) {
	*c.ctx = append(*c.ctx, b.Tokens[:o.Accepted]...)
	if o.Next != sim.NoToken {
		*c.ctx = append(*c.ctx, o.Next)
	}
}

// Passes returns the draft forward passes of the last draft.
func (c *Chains) Passes() int { return c.passes }

// Q returns draft row i of the last draft as float64 values.
func (c *Chains) Q(i int) []float64 { return c.rows.Q(i) }

// P returns target row i of the last draft.
func (c *Chains) P(i int) []float64 { return c.rows.P(i) }

// Drafter returns the chain drafter.
func (c *Chains) Drafter() ChainDrafter { return c.d }

// Trees is a tree drafter as the round loop's drafter after a context the
// caller grows: each round draws a tree from the drafter after the context
// and fills its target rows.
type Trees struct {
	d      sim.Drafter
	target sim.Model
	ctx    *[]int
}

// TreeRounds returns the round drafter of d after *ctx (the empty context
// when ctx is nil), filling the rows of target.
func TreeRounds(d sim.Drafter, target sim.Model, ctx *[]int) *Trees {
	return &Trees{d: d, target: target, ctx: ctx}
}

// DraftTree draws round r's tree into dst from its Draft stream.
func (t *Trees) DraftTree(r *run.Round, dst *sim.Tree) error {
	var ctx []int
	if t.ctx != nil {
		ctx = *t.ctx
	}
	sim.DraftTree(r.Rand(run.Draft), t.d, t.target, ctx, dst)
	return nil
}
