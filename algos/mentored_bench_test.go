package algos

import (
	"testing"

	"github.com/specsim/specsim/sim"
)

// BenchmarkMentoredSolve times one solve of mentored decoding's position
// problem (the cost a step pays at each examined position with u ≥ p/q)
// at V = 32,000 and D = 0.1, on heavy-tailed random rows (randRow with
// exponent 3, as the tests' pairs).
func BenchmarkMentoredSolve(b *testing.B) {
	rng := sim.NewRand(1, sim.StreamID("mentored-bench"))
	p, q := randRow(rng, 32000, 3, 0), randRow(rng, 32000, 3, 0)
	m := Mentored{D: 0.1}
	for b.Loop() {
		m.solve(sim.F64(p), sim.F64(q))
	}
}
