package source

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

func init() {
	Register(Kind{
		Name:    "temperature",
		Summary: "synthetic pool: Dirichlet(a) target, q = p at temperature T (V, a, T, contexts, seed)",
		Keys: []Key{keyPoolV,
			{Name: "a", Default: "0.1", Doc: "Dirichlet concentration of the target rows, > 0"},
			{Name: "T", Default: "1.5", Doc: "draft temperature, > 0: q = norm(p^(1/T))"},
			keyContext},
		Parse: func(a *Args) (Config, error) {
			s := shape(a)
			return Temperature{Shape: s, A: a.Float("a"), T: a.Float("T")}, nil
		},
	})
}

// Temperature is the config of kind temperature: a positional pool whose
// target rows are Dirichlet(A) draws and whose draft rows are the target
// rows at temperature T, q = norm(p^(1/T)).
type Temperature struct {
	Shape
	// A is the Dirichlet concentration of the target rows.
	A float64
	// T is the draft temperature.
	T float64
}

// Check reports impossible parameters with the field to fix, then a pool
// above the memory budget.
func (c Temperature) Check() error {
	if err := c.validate("temperature"); err != nil {
		return err
	}
	if !(c.A > 0) {
		return fmt.Errorf("source temperature: a = %g; the concentration must be > 0", c.A)
	}
	if !(c.T > 0) {
		return fmt.Errorf("source temperature: T = %g; the temperature must be > 0", c.T)
	}
	return c.checkMem("temperature", c.MemNeed())
}

// MemNeed returns the bytes Pool allocates at its peak (see Shape); -1 if
// it overflows.
func (c Temperature) MemNeed() int64 { return c.memNeed(0) }

// Build implements Config.
func (c Temperature) Build(rng *rand.Rand) (sim.BlockSource, error) { return c.Pool(rng) }

// Pool draws the pool's target rows from rng and tempers them into its
// draft rows.
func (c Temperature) Pool(rng *rand.Rand) (*sim.Pool, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	pRows, qRows := c.rows()
	p64 := dirichletRows(rng, c.A, int(pRows), c.V)
	q64 := make([][]float64, qRows)
	for i := range q64 {
		q64[i] = sim.Temperature(nil, p64[c.pIndex(i)], c.T)
	}
	return c.pool(p64, q64), nil
}
