package external

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
)

// TransformPool returns the pool of the laws a run with sampling s draws
// from: every row of pl (probabilities) turned into logits log p and
// through s (data.Sampling.Apply). Greedy sampling (temperature 0) is
// refused: its one-hot rows leave nothing to test statistically.
func TransformPool(pl *sim.Pool, s data.Sampling) (*sim.Pool, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Greedy() {
		return nil, fmt.Errorf("temperature = 0 is greedy decoding; check it with 'simulate exact'")
	}
	out := &sim.Pool{P: make([][]float32, len(pl.P)), Q: make([][]float32, len(pl.Q))}
	var tr data.Transformer
	logits := make([]float32, pl.V)
	for _, part := range []struct{ dst, src [][]float32 }{{out.P, pl.P}, {out.Q, pl.Q}} {
		for i, r := range part.src {
			for x, p := range r {
				logits[x] = float32(math.Log(float64(p)))
			}
			part.dst[i] = make([]float32, pl.V)
			if err := tr.Apply(s, part.dst[i], logits); err != nil {
				return nil, fmt.Errorf("row %d: %v", i, err)
			}
		}
	}
	return sim.PoolFromRows(pl.Name+" | "+s.String(), pl.Gamma, out.P, out.Q)
}
