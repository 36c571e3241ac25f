package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// Source is a block source named by its canonical spec: what package
// sim/source builds from a spec such as "dirichlet:V=1000,beta=0.7". The
// source is a *Chain over a small context-dependent model pair (PairOf
// gives the pair) or a positional *Pool of large synthetic rows (PoolOf
// gives the pool), or any other BlockSource a source kind builds.
type Source struct {
	Spec string
	BlockSource
}

// Pool is a positional model pair over a large vocabulary: for context c
// and position i (0-based) the target row is P[c*(γ+1)+i] and the draft row
// Q[c*γ+i], whatever tokens precede. Under this model the target law of a
// step's first γ+1 tokens is the product of its rows, which is what the
// statistical check tests. Rows are float32, as logged rows are.
type Pool struct {
	Name               string
	V, Gamma, Contexts int
	P, Q               [][]float32
	Sigma, MeanBeta    float64 // dirichlet: the calibrated σ and the achieved mean β
	draftAlias         []*Alias
	derived            sync.Map // Derived's values by slot
}

// Derived returns what build derives from the pool's rows alone, kept in
// slot for key: the value of the last call with the same slot and key, or
// build's, which then replaces what the slot held. The rows never change,
// so a check of the same pool and size need not sort and bin them again
// (the audit's rules, each checked on one pool). A slot holds one value at
// a time, so the values kept are as many as the slots (a check's world is
// one), and the slot's value is dropped before another key's build, so
// the pool never holds the old and the new at once; an error is returned,
// not kept. key must be comparable.
func (pl *Pool) Derived(slot, key any, build func() (any, error)) (any, error) {
	if d, ok := pl.derived.Load(slot); ok {
		if d.(derived).key == key {
			return d.(derived).v, nil
		}
		pl.derived.Delete(slot) // the old value goes before the new is built
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	pl.derived.Store(slot, derived{key, v})
	return v, nil
}

// derived is a value Derived keeps, with its key.
type derived struct{ key, v any }

// NewPoolRows returns the pool over the float32 rows p and q (context c's
// target row at position i is p[c*(γ+1)+i], its draft row q[c*γ+i]) with
// its alias tables built and MeanBeta computed, without checking the rows:
// for source kinds (package sim/source) whose rows are distributions by
// construction; PoolFromRows checks them. The rows must not be modified
// afterwards. It panics if the row counts do not form contexts of
// γ = gamma.
func NewPoolRows(gamma int, p, q [][]float32) *Pool {
	if gamma < 1 || len(q) == 0 || len(q)%gamma != 0 || len(p) != len(q)/gamma*(gamma+1) {
		panic(fmt.Sprintf("sim: NewPoolRows: %d target and %d draft rows do not form contexts of γ = %d", len(p), len(q), gamma))
	}
	pl := &Pool{V: len(p[0]), Gamma: gamma, Contexts: len(q) / gamma, P: p, Q: q}
	pl.MeanBeta = pl.meanBeta()
	pl.buildAliases()
	return pl
}

// pIndex maps a draft-row index to the target row of the same position.
func (pl *Pool) pIndex(qi int) int {
	c, i := qi/pl.Gamma, qi%pl.Gamma
	return c*(pl.Gamma+1) + i
}

func (pl *Pool) meanBeta() float64 {
	s := 0.0
	for qi, q := range pl.Q {
		p := pl.P[pl.pIndex(qi)]
		for x := range q {
			s += math.Min(float64(p[x]), float64(q[x]))
		}
	}
	return s / float64(len(pl.Q))
}

// PRow and QRow return context c's target row at position i (0..γ) and
// draft row at position i (0..γ-1).
func (pl *Pool) PRow(c, i int) []float32 { return pl.P[c*(pl.Gamma+1)+i] }

// QRow returns context c's draft row at position i.
func (pl *Pool) QRow(c, i int) []float32 { return pl.Q[c*pl.Gamma+i] }

// Next draws a context c uniformly with rng and fills dst from it as Fill
// does. A pool never runs out, so Next never returns an error; it
// implements BlockSource and is safe for concurrent use with distinct rngs
// and dsts.
func (pl *Pool) Next(rng *rand.Rand, dst *Block) error {
	pl.Fill(rng, rng.IntN(pl.Contexts), dst)
	return nil
}

// Fill points dst's rows at context c, sets dst.Ctx = c, and draws the
// draft tokens from the draft rows with rng (alias tables built by
// NewPool, O(1) per token). dst's slices are reused; Fill does not
// allocate once they have length γ. It only reads the pool, so concurrent
// calls with distinct rngs and dsts are safe; the rows must not be
// modified after NewPool.
func (pl *Pool) Fill(rng *rand.Rand, c int, dst *Block) {
	g := pl.Gamma
	if cap(dst.Tokens) < g {
		dst.Tokens = make([]int, g)
		dst.Q = make([]Row, g)
		dst.P = make([]Row, g+1)
	}
	dst.Tokens, dst.Q, dst.P = dst.Tokens[:g], dst.Q[:g], dst.P[:g+1]
	dst.Ctx = c
	for i := 0; i < g; i++ {
		dst.Q[i] = F32(pl.QRow(c, i))
		dst.Tokens[i] = pl.draftAlias[c*g+i].Sample(rng)
	}
	for i := 0; i <= g; i++ {
		dst.P[i] = F32(pl.PRow(c, i))
	}
}

// PoolFromRows returns a pool over the given rows (context c's target row
// at position i is p[c*(γ+1)+i], its draft row q[c*γ+i]) with its alias
// tables built, for callers that derive a pool from another one (a
// sampling transform, say). Every row must have length V and be a valid
// distribution; the rows must not be modified afterwards.
func PoolFromRows(name string, gamma int, p, q [][]float32) (*Pool, error) {
	if gamma < 1 || len(q) == 0 || len(q)%gamma != 0 || len(p) != len(q)/gamma*(gamma+1) {
		return nil, fmt.Errorf("pool %s: %d target and %d draft rows do not form contexts of γ = %d", name, len(p), len(q), gamma)
	}
	v := len(p[0])
	buf := make([]float64, v)
	for i, rows := range [][][]float32{p, q} {
		kind := [2]string{"target", "draft"}[i]
		for j, r := range rows {
			if len(r) != v {
				return nil, fmt.Errorf("pool %s: %s row %d has %d entries, row 0 has %d", name, kind, j, len(r), v)
			}
			if err := Validate(fmt.Sprintf("pool %s %s row %d", name, kind, j), Float64s(buf, r)); err != nil {
				return nil, err
			}
		}
	}
	pl := &Pool{Name: name, V: v, Gamma: gamma, Contexts: len(q) / gamma, P: p, Q: q}
	pl.buildAliases()
	pl.MeanBeta = pl.meanBeta()
	return pl, nil
}

// buildAliases builds the draft alias tables; NewPool calls it once.
func (pl *Pool) buildAliases() {
	pl.draftAlias = make([]*Alias, len(pl.Q))
	w := make([]float64, pl.V)
	for i, q := range pl.Q {
		pl.draftAlias[i] = NewAlias(Float64s(w, q))
	}
}
