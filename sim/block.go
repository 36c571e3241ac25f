package sim

import (
	"gonum.org/v1/gonum/floats"

	"errors"
	"fmt"
	"math/rand/v2"
)

// BlockSource fills dst with the next speculative step's rows and draft
// tokens, reusing dst's slices, and returns io.EOF when exhausted. It
// draws all of its randomness from rng and is safe for concurrent use
// with distinct rngs and distinct dsts.
type BlockSource interface {
	Next(rng *rand.Rand, dst *Block) error
}

// MaxGamma is the longest draft a Block may carry. Verifiers keep per-step
// scratch of this size on the stack, so a step never allocates.
const MaxGamma = 64

// Block is one speculative step on a single draft chain of γ = len(Tokens)
// tokens. Q[i] is the draft distribution Tokens[i] was drawn from; P has γ+1
// rows, P[i] being the target distribution after the prefix and
// Tokens[:i], so P[γ] is the bonus distribution. All rows have the same
// length V and storage type. Verifiers must not modify a Block.
type Block struct {
	Tokens []int
	Q, P   []Row
	// Ctx is the index of the source context the rows came from (a pool's
	// context), or -1 when the source has none.
	Ctx int
}

// Gamma returns the draft length.
func (b *Block) Gamma() int { return len(b.Tokens) }

// V returns the vocabulary size.
func (b *Block) V() int { return b.P[0].Len() }

// Check validates the block's shape: γ ≤ MaxGamma, len(Q) = γ,
// len(P) = γ+1, equal row lengths, and draft tokens in range with
// q_i(x_i) > 0.
func (b *Block) Check() error {
	g := len(b.Tokens)
	if g > MaxGamma {
		return fmt.Errorf("block: γ = %d exceeds the maximum %d; use a shorter draft", g, MaxGamma)
	}
	if len(b.Q) != g || len(b.P) != g+1 {
		return fmt.Errorf("block: %d draft tokens need %d q rows and %d p rows, got %d and %d", g, g, g+1, len(b.Q), len(b.P))
	}
	v := b.P[0].Len()
	for i := range b.P {
		if b.P[i].Len() != v {
			return fmt.Errorf("block: vocabulary mismatch: p[%d] has %d entries, p[0] has %d", i, b.P[i].Len(), v)
		}
	}
	for i, x := range b.Tokens {
		if b.Q[i].Len() != v {
			return fmt.Errorf("block: vocabulary mismatch: q[%d] has %d entries, p[0] has %d", i, b.Q[i].Len(), v)
		}
		if x < 0 || x >= v {
			return fmt.Errorf("block: draft token %d at position %d is outside the vocabulary [0, %d)", x, i, v)
		}
		if b.Q[i].At(x) <= 0 {
			return fmt.Errorf("block: draft token %d at position %d has q = 0: it cannot have been drawn from q", x, i)
		}
	}
	return nil
}

// Outcome is the result of verifying one Block: Tokens[:Accepted] are kept,
// then Next is emitted (a correction when Accepted < γ, the bonus token when
// Accepted == γ). Next == NoToken means the step adds no token of its own
// (a rule without the bonus token, after accepting the whole draft).
type Outcome struct {
	Accepted int
	Next     int
}

// NoToken is Outcome.Next when a step emits no extra token.
const NoToken = -1

// Emitted returns the number of tokens the step emits.
func (o Outcome) Emitted() int {
	if o.Next == NoToken {
		return o.Accepted
	}
	return o.Accepted + 1
}

// Algorithm decides one speculative step. Accept must not modify b, must
// draw all of its randomness from rng, must not allocate, and must be safe
// for concurrent use with distinct rngs.
type Algorithm interface {
	Accept(rng *rand.Rand, b *Block) Outcome
}

// Lawer is implemented by rules whose outcome law given a block is
// computable exactly: Law writes into dst the probability of every
// (Accepted, Next) pair given b, marginalising the rule's own randomness.
// It returns an error (wrapping ErrEmptyResidual, say) when b's rows leave
// the rule nothing to emit; dst is then incomplete.
type Lawer interface {
	Law(b *Block, dst *Law) error
}

// ErrEmptyResidual is returned by laws that reject with positive
// probability where the residual norm((w·p - q)+) is zero everywhere: the
// rows are inconsistent (a p that is not a distribution, say), so the rule
// has nothing to emit.
var ErrEmptyResidual = errors.New("rejection with positive probability but an empty residual")

// Law is the exact distribution of an Outcome given a Block: a
// (γ+1) × (V+1) table, entry (n, t) holding Pr(Accepted = n, Next = t),
// the column t = NoToken included.
type Law struct {
	Gamma, V int
	P        []float64
	// precise makes AddResidual normalise by ResidualMassDirect; the exact
	// engine sets it to recompute a law whose total the cancelling
	// identity of ResidualMass pushed away from 1. Reset keeps it.
	precise bool
}

// Reset sizes l for a block of draft length gamma over V tokens and zeroes
// it, reusing its storage.
func (l *Law) Reset(gamma, v int) {
	l.Gamma, l.V = gamma, v
	n := (gamma + 1) * (v + 1)
	if cap(l.P) < n {
		l.P = make([]float64, n)
	}
	l.P = l.P[:n]
	clear(l.P)
}

func (l *Law) idx(n, t int) int { return n*(l.V+1) + t + 1 }

// At returns Pr(Accepted = n, Next = t).
func (l *Law) At(n, t int) float64 { return l.P[l.idx(n, t)] }

// Add adds mass to Pr(Accepted = n, Next = t).
func (l *Law) Add(n, t int, mass float64) { l.P[l.idx(n, t)] += mass }

// AddRow adds mass·r(t) to Pr(Accepted = n, Next = t) for every t.
func (l *Law) AddRow(n int, mass float64, r Row) {
	if mass == 0 {
		return
	}
	dst := l.P[l.idx(n, 0) : l.idx(n, 0)+l.V]
	if r.f32 != nil {
		addScaled(dst, mass, r.f32[:l.V])
	} else {
		addScaled(dst, mass, r.f64[:l.V])
	}
}

// addScaled adds mass·r(t) to dst[t] (one dispatch on the row's storage,
// then a tight loop; the same arithmetic as r.At).
func addScaled[F float](dst []float64, mass float64, r []F) {
	for t, x := range r {
		dst[t] += mass * float64(x)
	}
}

// AddResidual adds mass·norm((w·p - q)+)(t) to Pr(Accepted = n, Next = t).
// When the residual is zero everywhere the mass must be zero too (a
// rejection that cannot happen); otherwise it returns an error wrapping
// ErrEmptyResidual and adds nothing, because the rule would have nothing
// to emit.
func (l *Law) AddResidual(n int, mass, w float64, p, q Row) error {
	if mass == 0 {
		return nil
	}
	z := ResidualMass(w, p, q)
	if l.precise || z <= 0 {
		z = ResidualMassDirect(w, p, q)
	}
	if z <= 0 {
		return l.addRoundedResidual(n, mass, w, p, q)
	}
	dst := l.P[l.idx(n, 0) : l.idx(n, 0)+l.V]
	switch {
	case p.f32 != nil && q.f32 != nil:
		addResidual(dst, mass, w, z, p.f32[:l.V], q.f32[:l.V])
	case p.f32 == nil && q.f32 == nil:
		addResidual(dst, mass, w, z, p.f64[:l.V], q.f64[:l.V])
	default: // rows of two storage types
		for t := range dst {
			if d := w*p.At(t) - q.At(t); d > 0 {
				dst[t] += mass * d / z
			}
		}
	}
	return nil
}

// addResidual adds (mass/z)·(w·p(t) - q(t)) to dst[t] where it is
// positive (one dispatch on the rows' storage, then a tight loop without
// a branch or a division per entry).
func addResidual[F float](dst []float64, mass, w, z float64, p, q []F) {
	q = q[:len(p)]
	s := mass / z
	for t, x := range p {
		dst[t] += s * max(w*float64(x)-float64(q[t]), 0)
	}
}

// roundingResidual is how far below zero w·p(t) - q(t) may be and still
// count as a residual lost to rounding.
const roundingResidual = 1e-12

// addRoundedResidual handles a residual that rounding emptied: peaked rows
// such as p = (0, 1), q = (1e-222, 1) reject the draft token with
// probability 1, but 1 - 1e-222 rounds to 1, so (p - q)+ is zero in
// float64 although its true value, 1e-222 on the second token, is not.
// When w = 1 and Σ(q - p)+, which equals the true residual mass, is
// positive but below roundingResidual, the mass goes to the tokens where p > 0 and w·p - q is within
// roundingResidual of zero, in proportion to p (the rows' only remaining
// information about where the lost residual lies). If there are none, the
// rows are inconsistent and it returns ErrEmptyResidual.
func (l *Law) addRoundedResidual(n int, mass, w float64, p, q Row) error {
	// For w = 1 and rows summing to 1, Σ(p - q)+ = Σ(q - p)+: the residual
	// was lost to rounding only if q exceeds p somewhere, by no more than
	// rounding (p = q exactly rejects with probability 0, so a positive
	// mass there means inconsistent rows).
	s, lost := 0.0, 0.0
	for t := 0; t < l.V; t++ {
		x, y := p.At(t), q.At(t)
		if x > 0 && w*x-y > -roundingResidual {
			s += x
		}
		if y > w*x {
			lost += y - w*x
		}
	}
	if w != 1 || !(lost > 0 && lost <= roundingResidual) {
		s = 0
	}
	if !(s > 0) {
		return fmt.Errorf("law: %w: rejection at position %d with probability %g (w = %g); check that the rows are normalised distributions", ErrEmptyResidual, n+1, mass, w)
	}
	base := l.idx(n, 0)
	for t := 0; t < l.V; t++ {
		if x := p.At(t); x > 0 && w*x-q.At(t) > -roundingResidual {
			l.P[base+t] += mass * x / s
		}
	}
	return nil
}

// Total returns Σ of all entries (1 for a complete law).
func (l *Law) Total() float64 { return floats.Sum(l.P) }

// Accepted returns Pr(Accepted = n).
func (l *Law) Accepted(n int) float64 {
	s := 0.0
	for _, v := range l.P[l.idx(n, NoToken) : l.idx(n, l.V-1)+1] {
		s += v
	}
	return s
}

// ExpectedAccepted returns E[Accepted].
func (l *Law) ExpectedAccepted() float64 {
	s := 0.0
	for n := 0; n <= l.Gamma; n++ {
		s += float64(n) * l.Accepted(n)
	}
	return s
}

// ExpectedEmitted returns E[emitted tokens] = E[Accepted] + Pr(Next ≠ NoToken).
func (l *Law) ExpectedEmitted() float64 {
	s := l.ExpectedAccepted()
	for n := 0; n <= l.Gamma; n++ {
		s += l.Accepted(n) - l.At(n, NoToken)
	}
	return s
}

// CheckOutcome checks the invariants every rule must keep on every step:
// 0 ≤ Accepted ≤ γ and Next ∈ [0, V) or NoToken.
func CheckOutcome(b *Block, o Outcome) error {
	if o.Accepted < 0 || o.Accepted > len(b.Tokens) {
		return fmt.Errorf("outcome: accepted %d outside [0, %d]", o.Accepted, len(b.Tokens))
	}
	if o.Next != NoToken && (o.Next < 0 || o.Next >= b.V()) {
		return fmt.Errorf("outcome: next token %d outside the vocabulary [0, %d)", o.Next, b.V())
	}
	return nil
}
