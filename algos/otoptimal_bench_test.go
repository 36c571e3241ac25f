package algos

import (
	"fmt"
	"testing"

	"github.com/specsim/specsim/sim"
)

// BenchmarkOTPlan times ot-optimal's assignment at one node (k = 4) on
// sparse Dirichlet(0.1) pairs: the cost of a step with several draws.
func BenchmarkOTPlan(b *testing.B) {
	for _, v := range []int{256, 4096, 32000} {
		b.Run(fmt.Sprintf("V=%d", v), func(b *testing.B) {
			t := &testing.T{}
			p, q := sim.F64(randDist(t, 1, v, 0.1)), sim.F64(randDist(t, 2, v, 0.1))
			for b.Loop() {
				newOTPlan(p, q, 4)
			}
		})
	}
}
