package source

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

func init() {
	Register(Kind{
		Name:    "uniformq",
		Summary: "synthetic pool: Dirichlet(a) target, uniform draft q = 1/V (V, a, contexts, seed)",
		Keys: []Key{keyPoolV,
			{Name: "a", Default: "0.1", Doc: "Dirichlet concentration of the target rows, > 0"},
			keyContext},
		Parse: func(a *Args) (Config, error) {
			return UniformQ{Shape: shape(a), A: a.Float("a")}, nil
		},
	})
}

// UniformQ is the config of kind uniformq: a positional pool whose target
// rows are Dirichlet(A) draws and whose draft rows are uniform.
type UniformQ struct {
	Shape
	// A is the Dirichlet concentration of the target rows.
	A float64
}

// Check reports impossible parameters with the field to fix, then a pool
// above the memory budget.
func (c UniformQ) Check() error {
	if err := c.validate("uniformq"); err != nil {
		return err
	}
	if !(c.A > 0) {
		return fmt.Errorf("source uniformq: a = %g; the concentration must be > 0", c.A)
	}
	return c.checkMem("uniformq", c.memNeed(0))
}

// Build implements Config.
func (c UniformQ) Build(rng *rand.Rand) (sim.BlockSource, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	pRows, qRows := c.rows()
	p64 := dirichletRows(rng, c.A, int(pRows), c.V)
	q64 := make([][]float64, qRows)
	for i := range q64 {
		q64[i] = make([]float64, c.V)
		for j := range q64[i] {
			q64[i][j] = 1 / float64(c.V)
		}
	}
	return c.pool(p64, q64), nil
}
