package algos

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/sim"
)

// Issue 23: mutant-q-mismatch takes any T > 0 its parameter allows; at
// T = 1e300 (and 1e-300) every q(y)^T left float64's range and the law
// was 0/0. The law is now a distribution for every T, and sampling runs.
func TestQMismatchExtremeT(t *testing.T) {
	t.Parallel()
	b := &sim.Block{Tokens: []int{1, 2},
		Q: []sim.Row{sim.F64([]float64{0.1, 0.6, 0.3}), sim.F64([]float64{0.25, 0.25, 0.5})},
		P: []sim.Row{sim.F64([]float64{0.3, 0.3, 0.4}), sim.F64([]float64{0.5, 0.2, 0.3}), sim.F64([]float64{0.2, 0.2, 0.6})}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, T := range []float64{1e-300, 5e-324, 1e-3, 0.5, 2, 1e20, 1e300, math.MaxFloat64} {
		m := QMismatch{T: T}
		var law sim.Law
		if err := m.Law(b, &law); err != nil {
			t.Fatalf("T = %g: %v", T, err)
		}
		for i, x := range law.P {
			if !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("T = %g: law entry %d = %g", T, i, x)
			}
		}
		if tot := law.Total(); math.Abs(tot-1) > 1e-12 {
			t.Errorf("T = %g: the law sums to %.17g", T, tot)
		}
		for range 100 {
			if o := m.Accept(rng, b); o.Next < 0 || o.Next >= 3 || o.Accepted < 0 || o.Accepted > 2 {
				t.Fatalf("T = %g: outcome %+v", T, o)
			}
		}
	}
}
