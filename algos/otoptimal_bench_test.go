package algos

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// BenchmarkOTPlan times ot-optimal's assignment at one node (k = 4) on
// p ~ Dirichlet(0.1) and q = p·exp(N(0,1)) renormalised (the benchmark pool's kind of pair): the cost of a step with several draws.
func BenchmarkOTPlan(b *testing.B) {
	for _, v := range []int{256, 4096, 32000} {
		b.Run(fmt.Sprintf("V=%d", v), func(b *testing.B) {
			t := &testing.T{}
			pv := randDist(t, 1, v, 0.1)
			qv := make([]float64, v)
			rng := sim.NewRand(3, sim.StreamID("ot-bench", uint64(v)))
			for i, x := range pv {
				qv[i] = x * math.Exp(rng.NormFloat64())
			}
			sim.Normalize(qv)
			p, q := sim.F64(pv), sim.F64(qv)
			for b.Loop() {
				newOTPlan(p, q, 4)
			}
		})
	}
}
