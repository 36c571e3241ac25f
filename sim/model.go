package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
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

// RowView returns the row of ctx's state itself (RowViewer).
func (m *Markov) RowView(ctx []int) Row { return F64(m.Rows[m.State(ctx)]) }

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
	// MemBudget is the most bytes the pair's rows may take (0:
	// DefaultMemBudget); NewMarkovPair refuses a larger pair with an
	// error wrapping ErrMemBudget.
	MemBudget int64
}

// Validate reports impossible parameters with the field to fix.
func (c MarkovConfig) Validate() error {
	switch {
	case c.V < 2 || c.V > 64:
		return fmt.Errorf("markov: V = %d; use 2 <= V <= 64 (the exact engine wants V <= 8)", c.V)
	case c.Order < 1 || c.Order > 3:
		return fmt.Errorf("markov: order = %d; use 1, 2 or 3", c.Order)
	case !(c.A > 0) || c.A > 1e6:
		return fmt.Errorf("markov: a = %g; the Dirichlet concentration must be in (0, 1e6]", c.A)
	case !(c.Quality >= 0 && c.Quality <= 1):
		return fmt.Errorf("markov: quality = %g; use a value in [0, 1]", c.Quality)
	}
	return nil
}

// CheckMem checks the pair's rows, (V+1)^order states of two V-long
// float64 rows (p and q), against c.MemBudget.
func (c MarkovConfig) CheckMem() error {
	states := int64(1)
	for range c.Order {
		states = MulBytes(states, int64(c.V+1))
	}
	return CheckMem(fmt.Sprintf("markov: (V+1)^order = %d states × V = %d", states, c.V),
		MulBytes(states, int64(c.V), 2*8), c.MemBudget, "lower V or order")
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
	if err := c.CheckMem(); err != nil {
		return Pair{}, err
	}
	p := &Markov{V: c.V, K: c.Order, Rows: make([][]float64, states)}
	q := &Markov{V: c.V, K: c.Order, Rows: make([][]float64, states)}
	lg := make([]float64, c.V)
	for s := range states {
		p.Rows[s] = dirichletRow(rng, c.A, make([]float64, c.V), lg)
		r := dirichletRow(rng, c.A, make([]float64, c.V), lg)
		q.Rows[s] = make([]float64, c.V)
		for i := range r {
			q.Rows[s][i] = c.Quality*p.Rows[s][i] + (1-c.Quality)*r[i]
		}
		Normalize(q.Rows[s])
	}
	name := fmt.Sprintf("markov:V=%d,order=%d,a=%g,quality=%g", c.V, c.Order, c.A, c.Quality)
	return Pair{Name: name, P: p, Q: q}, nil
}

// dirichletRow draws a Dirichlet(a, …, a) row into dst as normalised
// Gamma(a, 1) draws, consuming rng exactly as gonum's distmv.Dirichlet
// does, so rows whose draws are representable come out bit-identical to
// it. For small a every draw can underflow (log G ≈ log(U)/a, so at
// a = 0.01 a draw below 1e-308 has probability about 0.1%; at a = 1e-5
// nearly all do) and the plain normalisation then loses all precision or
// divides 0 by 0. gammaLog also returns log G, computed without
// underflow (Marsaglia–Tsang's boost for shape < 1: log G = log G' +
// log(U)/a; Liu–Martin–Syring's log-space draw for a < 0.2), and a row
// whose sum is below rowUnderflow is normalised in log space instead:
// p_i = exp(log G_i - max_j log G_j) / Σ. That is the same Dirichlet
// draw, only computed without underflow, so no warning is due. lg is
// scratch of length len(dst).
func dirichletRow(rng *rand.Rand, a float64, dst, lg []float64) []float64 {
	rnd := rand.New(rng) // as distuv.Gamma.Rand wraps its Src
	for i := range dst {
		dst[i], lg[i] = gammaLog(rnd, a)
	}
	sum := floats.Sum(dst)
	if sum >= rowUnderflow {
		floats.Scale(1/sum, dst)
		Normalize(dst)
		return dst
	}
	m := floats.Max(lg)
	if math.IsInf(m, -1) || math.IsNaN(m) {
		// a below the smallest normal float64 (1/a overflows): the
		// Dirichlet is one-hot at a uniformly random coordinate
		clear(dst)
		dst[rng.IntN(len(dst))] = 1
		return dst
	}
	for i, l := range lg {
		dst[i] = math.Exp(l - m)
	}
	Normalize(dst)
	return dst
}

// rowUnderflow is the Gamma-draw sum below which dirichletRow normalises in
// log space: entries then lose relative precision (subnormals start at
// 2.2e-308) well before the sum does.
const rowUnderflow = 1e-200

// gammaLog draws G ~ Gamma(a, 1) exactly as gonum's distuv.Gamma.Rand does
// (the same rng calls and the same float operations, so G is bit-identical)
// and also returns log G computed without underflow.
func gammaLog(rnd *rand.Rand, a float64) (g, logG float64) {
	switch {
	case a == 1:
		g = rnd.ExpFloat64()
		return g, math.Log(g)
	case a < 0.2:
		// Liu, Martin and Syring (2017), "Simulating from a gamma
		// distribution with small shape parameter": G = exp(-z/a).
		lambda := 1/a - 1
		lr := -math.Log1p(1 / lambda / math.E)
		for {
			e := rnd.ExpFloat64()
			var z float64
			if e >= -lr {
				z = e + lr
			} else {
				z = -rnd.ExpFloat64() / lambda
			}
			eza := math.Exp(-z / a)
			lh := -z - eza
			var lEta float64
			if z >= 0 {
				lEta = -z
			} else {
				lEta = -1 + lambda*z
			}
			if lh-lEta > -rnd.ExpFloat64() {
				return eza, -z / a
			}
		}
	default:
		// Marsaglia and Tsang (2000), "A simple method for generating gamma
		// variables"; for a < 1 the boost G = G'·U^(1/a), G' ~ Gamma(a+1).
		d := a - 1.0/3
		m, lm := 1.0, 0.0
		if a < 1 {
			d += 1.0
			u := rnd.Float64()
			m = math.Pow(u, 1/a)
			lm = math.Log(u) / a
		}
		c := 1 / (3 * math.Sqrt(d))
		for {
			x := rnd.NormFloat64()
			v := 1 + x*c
			if v <= 0.0 {
				continue
			}
			v = v * v * v
			u := rnd.Float64()
			if u < 1.0-0.0331*(x*x)*(x*x) || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
				return m * d * v, lm + math.Log(d*v)
			}
		}
	}
}
