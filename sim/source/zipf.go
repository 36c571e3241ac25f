package source

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

func init() {
	Register(Kind{
		Name:    "zipf",
		Summary: "synthetic pool: Zipf target with exponent s on a random order, Zipf-like draft with exponent sq (V, s, sq, contexts, seed)",
		Keys: []Key{keyPoolV,
			{Name: "s", Default: "1.1", Doc: "Zipf exponent of the target rows, > 0: p(x) ∝ rank(x)^-s over a random ranking"},
			{Name: "sq", Default: "1.3", Doc: "Zipf exponent of the draft rows over the target's ranking, > 0"},
			keyContext},
		Parse: func(a *Args) (Config, error) {
			s := shape(a)
			return Zipf{Shape: s, S: a.Float("s"), SQ: a.Float("sq")}, nil
		},
	})
}

// Zipf is the config of kind zipf: a positional pool whose target rows are
// Zipf laws with exponent S over a random ranking of the tokens, and whose
// draft rows are Zipf laws with exponent SQ over the same ranking.
type Zipf struct {
	Shape
	// S and SQ are the Zipf exponents of target and draft.
	S, SQ float64
}

// Check reports impossible parameters with the field to fix, then a pool
// above the memory budget.
func (c Zipf) Check() error {
	if err := c.validate("zipf"); err != nil {
		return err
	}
	if !(c.S > 0) || !(c.SQ > 0) {
		return fmt.Errorf("source zipf: s = %g, sq = %g; both exponents must be > 0", c.S, c.SQ)
	}
	return c.checkMem("zipf", c.MemNeed())
}

// MemNeed returns the bytes Pool allocates at its peak (see Shape) with
// the ranking of every target row, 8 B per target row and token; -1 if it
// overflows.
func (c Zipf) MemNeed() int64 {
	pRows, _ := c.rows()
	return c.memNeed(sim.MulBytes(pRows, 8))
}

// Build implements Config.
func (c Zipf) Build(rng *rand.Rand) (sim.BlockSource, error) { return c.Pool(rng) }

// Pool draws one ranking per target row from rng.
func (c Zipf) Pool(rng *rand.Rand) (*sim.Pool, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	pRows, qRows := c.rows()
	p64 := make([][]float64, pRows)
	for i := range p64 {
		p64[i] = zipfRow(rng.Perm(c.V), c.S)
	}
	q64 := make([][]float64, qRows)
	for i := range q64 {
		q64[i] = zipfLike(p64[c.pIndex(i)], c.S, c.SQ)
	}
	return c.pool(p64, q64), nil
}

// zipfRow returns p(perm[r]) ∝ (r+1)^-s: a Zipf law over a random ranking.
func zipfRow(perm []int, s float64) []float64 {
	p := make([]float64, len(perm))
	for r, x := range perm {
		p[x] = math.Pow(float64(r+1), -s) // the rank-1 entry is 1, so the sum is >= 1
	}
	sim.Normalize(p)
	return p
}

// zipfLike returns the Zipf law with exponent sq over the ranking of p.
func zipfLike(p []float64, s, sq float64) []float64 {
	q := make([]float64, len(p))
	for x, v := range p {
		// p(x) ∝ (r+1)^-s, so (r+1)^-sq ∝ p(x)^(sq/s).
		q[x] = math.Pow(v, sq/s)
		if q[x] == 0 && v > 0 {
			return zipfLikeLog(q, p, sq/s)
		}
	}
	if z := sim.Normalize(q); !(z > 0) || math.IsInf(z, 0) {
		return zipfLikeLog(q, p, sq/s)
	}
	return q
}

// zipfLikeLog computes q ∝ p^k in log space, q(x) = exp(k·(log p(x) -
// log max p)), for the rows where the direct power under- or overflows
// (zipf:s=1e-3 makes k = sq/s = 1300, and (1/64)^1300 is 0 in float64).
// Rows whose powers are representable keep the direct computation, so
// their numbers are unchanged.
func zipfLikeLog(q, p []float64, k float64) []float64 {
	lm := math.Log(p[sim.Argmax(p)])
	for x, v := range p {
		switch d := math.Log(v) - lm; {
		case v <= 0:
			q[x] = 0
		case d == 0:
			q[x] = 1 // also when k is +Inf
		default:
			q[x] = math.Exp(k * d)
		}
	}
	sim.Normalize(q)
	return q
}
