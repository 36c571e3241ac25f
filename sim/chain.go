package sim

import (
	"fmt"
	"math/rand/v2"
)

// Chain is the chain drafter over a small model pair: each Next drafts γ
// tokens autoregressively from the empty context, x_i ~ q(.|x_<i) by
// inverse CDF (one rng.Float64 per token), and evaluates the target rows
// p(.|x_<i) for i = 1..γ+1. It implements BlockSource (it never runs out)
// and PairSource. Chain is read-only after NewChain, so concurrent calls
// with distinct rngs and dsts are safe as long as the models' Next are.
//
// Chain is the source of a pair's blocks (what a markov spec builds and
// the exact engine finds through PairOf); the drafters of generations,
// after a growing context and under a draft-length policy, are in package
// sim/draft, whose draft.Chain draws the same blocks at the empty context.
type Chain struct {
	pair  Pair
	gamma int
}

// NewChain returns the chain drafter of γ = gamma tokens over pr (γ = 0
// gives blocks with no draft and one target row).
func NewChain(pr Pair, gamma int) (*Chain, error) {
	if gamma < 0 || gamma > MaxGamma {
		return nil, fmt.Errorf("chain: gamma = %d; use 0 <= gamma <= %d", gamma, MaxGamma)
	}
	if pr.P == nil || pr.Q == nil {
		return nil, fmt.Errorf("chain: the pair %q has no target or no draft model", pr.Name)
	}
	if err := pr.Check(); err != nil {
		return nil, err
	}
	return &Chain{pair: pr, gamma: gamma}, nil
}

// ModelPair returns the pair the chain drafts from.
func (c *Chain) ModelPair() Pair { return c.pair }

// Gamma returns the draft length.
func (c *Chain) Gamma() int { return c.gamma }

// Next drafts one chain into dst and sets dst.Ctx = -1. The rows of dst
// are float64 rows that dst owns: Next writes into the storage of dst's
// float64 rows of the right length and allocates the others, so pass a
// zero Block the first time (or one whose rows are scratch of its own),
// never one whose rows point at model data. Once dst has been filled,
// Next does not allocate.
func (c *Chain) Next(rng *rand.Rand, dst *Block) error {
	g, v := c.gamma, c.pair.P.Vocab()
	if cap(dst.Tokens) < g {
		dst.Tokens = make([]int, g)
	}
	if cap(dst.Q) < g {
		dst.Q = make([]Row, g)
	}
	if cap(dst.P) < g+1 {
		dst.P = make([]Row, g+1)
	}
	dst.Tokens, dst.Q, dst.P = dst.Tokens[:g], dst.Q[:g], dst.P[:g+1]
	dst.Ctx = -1
	toks := dst.Tokens
	for j := 0; j < g; j++ {
		q := ownedRow(&dst.Q[j], v)
		c.pair.Q.Next(toks[:j], q)
		toks[j] = SampleCDF(rng.Float64(), q)
	}
	for j := 0; j <= g; j++ {
		c.pair.P.Next(toks[:j], ownedRow(&dst.P[j], v))
	}
	return nil
}

// ownedRow returns r's float64 storage when it has length v, and otherwise
// points r at a fresh float64 row of length v.
func ownedRow(r *Row, v int) []float64 {
	if r.f32 == nil && len(r.f64) == v {
		return r.f64
	}
	*r = F64(make([]float64, v))
	return r.f64
}

// PairSource is implemented by block sources that draft from a small model
// pair; the exact engines need the pair to enumerate drafts.
type PairSource interface {
	BlockSource
	ModelPair() Pair
}

// PairOf returns the model pair s drafts from, when it has one (a Chain,
// or a Source wrapping one).
func PairOf(s BlockSource) (Pair, bool) {
	if src, ok := s.(Source); ok {
		s = src.BlockSource
	}
	if ps, ok := s.(PairSource); ok {
		return ps.ModelPair(), true
	}
	return Pair{}, false
}

// PoolOf returns the pool s draws from, when it is one (a *Pool, or a
// Source wrapping one).
func PoolOf(s BlockSource) (*Pool, bool) {
	if src, ok := s.(Source); ok {
		s = src.BlockSource
	}
	pl, ok := s.(*Pool)
	return pl, ok
}

// CopyRow copies src into dst's storage when it has the same type and
// length, and otherwise points dst at a fresh copy of src. Sources that
// fill blocks from buffers they reuse (a log reader) keep dst's rows their
// own with it, without allocating once dst has been filled.
func CopyRow(dst *Row, src Row) {
	switch {
	case src.f32 != nil && dst.f64 == nil && len(dst.f32) == len(src.f32):
		copy(dst.f32, src.f32)
	case src.f32 != nil:
		*dst = F32(append([]float32(nil), src.f32...))
	case dst.f32 == nil && len(dst.f64) == len(src.f64):
		copy(dst.f64, src.f64)
	default:
		*dst = F64(append([]float64(nil), src.f64...))
	}
}
