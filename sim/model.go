package sim

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distmv"
)

// Model is a next-token distribution over a small vocabulary that may
// depend on the whole prefix: a language model in miniature.
type Model interface {
	// Vocab returns the vocabulary size V.
	Vocab() int
	// Next writes p(.|ctx) into dst, which has length V.
	Next(ctx []int, dst []float64)
}

// Pair is a target model P and a draft model Q over one vocabulary.
type Pair struct {
	Name string
	P, Q Model
}

// Check verifies that the models share a vocabulary and that the rows at
// the empty context are valid distributions.
func (pr Pair) Check() error {
	if pr.P.Vocab() != pr.Q.Vocab() {
		return fmt.Errorf("%w: vocabulary mismatch: target has %d tokens and draft has %d", ErrBadDist, pr.P.Vocab(), pr.Q.Vocab())
	}
	v := pr.P.Vocab()
	p, q := make([]float64, v), make([]float64, v)
	pr.P.Next(nil, p)
	pr.Q.Next(nil, q)
	return ValidatePair(p, q)
}

// Fixed is a context-free model: the same distribution at every position.
type Fixed []float64

// Vocab returns len(f).
func (f Fixed) Vocab() int { return len(f) }

// Next copies f into dst.
func (f Fixed) Next(_ []int, dst []float64) { copy(dst, f) }

// Greedy wraps a model with argmax decoding: its rows are one-hot at the
// wrapped row's argmax (lowest index on ties). It is the target law that
// greedy verification preserves.
type Greedy struct{ M Model }

// Vocab returns the wrapped model's vocabulary size.
func (g Greedy) Vocab() int { return g.M.Vocab() }

// Next writes the one-hot row of the wrapped model's argmax.
func (g Greedy) Next(ctx []int, dst []float64) {
	g.M.Next(ctx, dst)
	OneHot(dst, len(dst), Argmax(dst))
}

// Markov is a Markov chain of order K over V tokens: p(.|ctx) depends on
// the last K tokens of ctx only, with shorter contexts padded on the left
// by a start symbol, so the first K positions have their own rows.
type Markov struct {
	V, K int
	Rows [][]float64 // indexed by the state code of the last K tokens
}

// Vocab returns V.
func (m *Markov) Vocab() int { return m.V }

// State returns the row index of ctx: the last K tokens, start-padded,
// read as a base-(V+1) number with the start symbol as digit V.
func (m *Markov) State(ctx []int) int {
	s := 0
	for j := 0; j < m.K; j++ {
		d := m.V // start symbol
		if i := len(ctx) - m.K + j; i >= 0 {
			d = ctx[i]
		}
		s = s*(m.V+1) + d
	}
	return s
}

// Next copies the row of ctx's state into dst.
func (m *Markov) Next(ctx []int, dst []float64) { copy(dst, m.Rows[m.State(ctx)]) }

// MarkovConfig describes a random Markov model pair.
type MarkovConfig struct {
	V, Order int
	// A is the Dirichlet concentration of every target row (small A gives
	// peaked rows).
	A float64
	// Quality in [0, 1] is the draft-quality knob: each draft row is
	// Quality·p + (1-Quality)·r with r an independent Dirichlet(A) row, so
	// Quality = 1 makes the draft exact and Quality = 0 unrelated.
	Quality float64
}

// Validate reports impossible parameters with the field to fix.
func (c MarkovConfig) Validate() error {
	switch {
	case c.V < 2 || c.V > 64:
		return fmt.Errorf("markov: V = %d; use 2 <= V <= 64 (the exact engine wants V <= 8)", c.V)
	case c.Order < 1 || c.Order > 3:
		return fmt.Errorf("markov: order = %d; use 1, 2 or 3", c.Order)
	case !(c.A > 0) || c.A > 1e6:
		return fmt.Errorf("markov: a = %g; the Dirichlet concentration must be > 0", c.A)
	case !(c.Quality >= 0 && c.Quality <= 1):
		return fmt.Errorf("markov: quality = %g; use a value in [0, 1]", c.Quality)
	}
	return nil
}

// NewMarkovPair draws a random target chain and its draft from rng.
func NewMarkovPair(rng *rand.Rand, c MarkovConfig) (Pair, error) {
	if err := c.Validate(); err != nil {
		return Pair{}, err
	}
	states := 1
	for range c.Order {
		states *= c.V + 1
	}
	alpha := make([]float64, c.V)
	for i := range alpha {
		alpha[i] = c.A
	}
	dir := distmv.NewDirichlet(alpha, rng)
	p := &Markov{V: c.V, K: c.Order, Rows: make([][]float64, states)}
	q := &Markov{V: c.V, K: c.Order, Rows: make([][]float64, states)}
	for s := range states {
		p.Rows[s] = positive(dir.Rand(nil))
		r := positive(dir.Rand(nil))
		q.Rows[s] = make([]float64, c.V)
		for i := range r {
			q.Rows[s][i] = c.Quality*p.Rows[s][i] + (1-c.Quality)*r[i]
		}
		Normalize(q.Rows[s])
	}
	name := fmt.Sprintf("markov:V=%d,order=%d,a=%g,quality=%g", c.V, c.Order, c.A, c.Quality)
	return Pair{Name: name, P: p, Q: q}, nil
}

// positive renormalises a Dirichlet draw whose entries underflowed: a zero
// entry (possible for small concentrations) is left at zero, but the row is
// renormalised so it sums to 1 in float64.
func positive(p []float64) []float64 {
	Normalize(p)
	return p
}
