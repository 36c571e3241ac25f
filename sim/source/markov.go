package source

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

func init() {
	Register(Kind{
		Name:    "markov",
		Summary: "model pair: random Markov chains of order 1 or 2 (V, order, a, quality, seed); small V enumerates exactly",
		Keys: []Key{
			{Name: "V", Default: "4", Doc: "vocabulary size, 2..64 (the exact engine wants V <= 8)"},
			{Name: "order", Default: "1", Doc: "tokens of context each row depends on, 1, 2 or 3"},
			{Name: "a", Default: "0.5", Doc: "Dirichlet concentration of every row, in (0, 1e6] (small a: peaked rows)"},
			{Name: "quality", Default: "0.5", Doc: "draft quality in [0, 1]: each draft row is quality·p + (1-quality)·r, r an independent Dirichlet(a) row"}},
		Quality: "quality",
		Parse: func(a *Args) (Config, error) {
			return Markov{Name: a.Spec, Gamma: a.Gamma, MarkovConfig: sim.MarkovConfig{
				V: a.Int("V"), Order: a.Int("order"), A: a.Float("a"), Quality: a.Float("quality"), MemBudget: a.MemBudget}}, nil
		},
	})
}

// Markov is the config of kind markov: a random Markov model pair
// (sim.NewMarkovPair) drafted in chains of Gamma tokens (sim.Chain).
type Markov struct {
	// Name names the pair (the canonical spec when built from one; ""
	// keeps sim.NewMarkovPair's name).
	Name string
	sim.MarkovConfig
	// Gamma is the chain's draft length.
	Gamma int
}

// Check reports the draft length, then impossible parameters with the
// field to fix, then a pair above the memory budget.
func (c Markov) Check() error {
	if c.Gamma < 1 || c.Gamma > sim.MaxGamma {
		return fmt.Errorf("source %s: gamma = %d; use 1 <= gamma <= %d", c.Name, c.Gamma, sim.MaxGamma)
	}
	if err := c.Validate(); err != nil {
		return err
	}
	return c.CheckMem()
}

// States returns V^order target states over V tokens (Stater).
func (c Markov) States() (states, v int) {
	states = 1
	for range c.Order {
		states *= c.V
	}
	return states, c.V
}

// Build draws the pair from rng and returns its chain drafter (a
// *sim.Chain; sim.PairOf gives the pair). Gamma 0 is allowed here: the
// exact engine drafts its own lengths from the pair.
func (c Markov) Build(rng *rand.Rand) (sim.BlockSource, error) {
	pr, err := sim.NewMarkovPair(rng, c.MarkovConfig)
	if err != nil {
		return nil, err
	}
	if c.Name != "" {
		pr.Name = c.Name
	}
	ch, err := sim.NewChain(pr, c.Gamma)
	if err != nil {
		return nil, err
	}
	return ch, nil
}
