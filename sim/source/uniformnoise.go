package source

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

func init() {
	Register(Kind{
		Name:    "uniform-noise",
		Summary: "synthetic pool: uniform target and draft rows, each entry scaled by 1 + noise·U(0,1) and renormalised (V, noise, contexts, seed)",
		Keys: []Key{keyPoolV,
			{Name: "noise", Default: "0.5", Doc: "relative noise on every entry, >= 0 (0: p = q = uniform)"},
			keyContext},
		Quality: "noise",
		Parse: func(a *Args) (Config, error) {
			s := shape(a)
			return UniformNoise{Shape: s, Noise: a.Float("noise")}, nil
		},
	})
}

// UniformNoise is the config of kind uniform-noise: a positional pool of
// uniform rows perturbed entrywise by independent uniform noise.
type UniformNoise struct {
	Shape
	// Noise is the relative noise: each entry is 1 + Noise·U(0,1) before
	// normalisation.
	Noise float64
}

// Check reports impossible parameters, then a pool above the budget.
func (c UniformNoise) Check() error {
	if err := c.validate("uniform-noise"); err != nil {
		return err
	}
	if !(c.Noise >= 0) {
		return fmt.Errorf("source uniform-noise: noise = %g; use a value >= 0", c.Noise)
	}
	return c.checkMem("uniform-noise", c.memNeed(0))
}

// Build draws the pool from rng.
func (c UniformNoise) Build(rng *rand.Rand) (sim.BlockSource, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	pRows, qRows := c.rows()
	row := func() []float64 {
		r := make([]float64, c.V)
		for x := range r {
			r[x] = 1 + c.Noise*rng.Float64()
		}
		sim.Normalize(r)
		return r
	}
	p64, q64 := make([][]float64, pRows), make([][]float64, qRows)
	for i := range p64 {
		p64[i] = row()
	}
	for i := range q64 {
		q64[i] = row()
	}
	return c.pool(p64, q64), nil
}
