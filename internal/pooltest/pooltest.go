package pooltest

import (
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/sim"
)

// Random returns a pool named name of nc contexts over v tokens with
// draft length g: context c's γ+1 target rows then its γ draft rows, each
// entry U(0, 1) + floor normalised, drawn in that order from
// PCG(seed1, seed2). It fails t if the rows do not make a pool.
func Random(t testing.TB, name string, v, g, nc int, floor float64, seed1, seed2 uint64) *sim.Pool {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed1, seed2))
	row := func() []float32 {
		r := make([]float32, v)
		s := float32(0)
		for i := range r {
			r[i] = float32(rng.Float64() + floor)
			s += r[i]
		}
		for i := range r {
			r[i] /= s
		}
		return r
	}
	var p, q [][]float32
	for range nc {
		for range g + 1 {
			p = append(p, row())
		}
		for range g {
			q = append(q, row())
		}
	}
	pl, err := sim.PoolFromRows(name, g, p, q)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}
