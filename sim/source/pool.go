package source

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/specsim/specsim/sim"
)

// Shape is what every positional pool kind shares: a name, the
// vocabulary size V, the draft length Gamma, the number of independent
// Contexts and the memory budget. A pool of this shape holds, per
// context, Gamma+1 target rows and Gamma draft rows of V float32s (see
// sim.Pool).
type Shape struct {
	// Name names the pool (the canonical spec when built from one).
	Name               string
	V, Gamma, Contexts int
	// MemBudget is the most bytes building the pool may take (0:
	// sim.DefaultMemBudget).
	MemBudget int64
}

// MaxPoolV is the largest vocabulary of a pool: 2^22 tokens, the same
// limit as a log's vocab_size.
const MaxPoolV = 1 << 22

// MaxContexts is the most contexts a pool may hold.
const MaxContexts = 1 << 16

// poolKeys documents the keys every pool kind takes besides its own.
var (
	keyPoolV   = Key{Name: "V", Default: "1000", Doc: fmt.Sprintf("vocabulary size, 2..%d", MaxPoolV)}
	keyContext = Key{Name: "contexts", Default: "16", Doc: fmt.Sprintf("independent contexts (each with its own γ+1 target and γ draft rows), 1..%d", MaxContexts)}
)

// shape reads the keys of keyPoolV and keyContext.
func shape(a *Args) Shape {
	return Shape{Name: a.Spec, V: a.Int("V"), Gamma: a.Gamma, Contexts: a.Int("contexts"), MemBudget: a.MemBudget}
}

// validate reports an impossible shape with the field to fix; kind names
// the pool in the message.
func (s Shape) validate(kind string) error {
	switch {
	case s.V < 2 || s.V > MaxPoolV:
		return fmt.Errorf("source %s: V = %d; use 2 <= V <= %d", kind, s.V, MaxPoolV)
	case s.Gamma < 1 || s.Gamma > sim.MaxGamma:
		return fmt.Errorf("source %s: gamma = %d; use 1 <= gamma <= %d", kind, s.Gamma, sim.MaxGamma)
	case s.Contexts < 1 || s.Contexts > MaxContexts:
		return fmt.Errorf("source %s: contexts = %d; use 1 <= contexts <= %d", kind, s.Contexts, MaxContexts)
	}
	return nil
}

// rows returns the number of target and draft rows.
func (s Shape) rows() (p, q int64) {
	return int64(s.Contexts) * int64(s.Gamma+1), int64(s.Contexts) * int64(s.Gamma)
}

// memNeed returns the bytes a pool of this shape allocates at its peak,
// given extra bytes per token beyond what every pool takes: per token the
// float32 rows (4 B each), their float64 drafts while they are drawn (8 B
// each) and the draft alias tables (12 B per draft row); -1 if it
// overflows.
func (s Shape) memNeed(extra int64) int64 {
	pRows, qRows := s.rows()
	perToken := sim.MulBytes(pRows, 4+8) + sim.MulBytes(qRows, 4+8+12) + extra
	return sim.MulBytes(int64(s.V), perToken)
}

// checkMem checks need against the budget, naming the pool's size.
func (s Shape) checkMem(kind string, need int64) error {
	return sim.CheckMem(fmt.Sprintf("source %s: V = %d × contexts = %d × γ = %d", kind, s.V, s.Contexts, s.Gamma),
		need, s.MemBudget, "lower V or contexts")
}

// pIndex maps a draft-row index to the target row of the same position.
func (s Shape) pIndex(qi int) int { return qi/s.Gamma*(s.Gamma+1) + qi%s.Gamma }

// pool stores float64 rows as the pool's float32 rows and builds it.
func (s Shape) pool(p64, q64 [][]float64) *sim.Pool {
	p, q := make([][]float32, len(p64)), make([][]float32, len(q64))
	for i := range p64 {
		p[i] = toFloat32(p64[i])
	}
	for i := range q64 {
		q[i] = toFloat32(q64[i])
	}
	pl := sim.NewPoolRows(s.Gamma, p, q)
	pl.Name = s.Name
	return pl
}

// dirichletRows draws n rows of Dirichlet(a, …, a) over v tokens as
// normalised Gamma(a, 1) draws; a row whose every draw underflowed gets
// all its mass on one token drawn uniformly.
func dirichletRows(rng *rand.Rand, a float64, n, v int) [][]float64 {
	g := distuv.Gamma{Alpha: a, Beta: 1, Src: rng}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, v)
		for x := range rows[i] {
			rows[i][x] = g.Rand()
		}
		if sim.Normalize(rows[i]) <= 0 {
			rows[i][rng.IntN(v)] = 1 // every gamma draw underflowed
		}
	}
	return rows
}

func toFloat32(p []float64) []float32 {
	out := make([]float32, len(p))
	for i, v := range p {
		out[i] = float32(v)
	}
	return out
}
