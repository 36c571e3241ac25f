package source

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestPerturbAlphaBits checks perturbAlpha against its definition,
// p·exp(σz) through sim.Normalize and then sim.Alpha, bit for bit: on
// Dirichlet rows at the σ the calibration tries, at σ = 0, on a row whose
// weights overflow to +Inf (sim.Normalize then leaves them as they are)
// and on an all-zero row.
func TestPerturbAlphaBits(t *testing.T) {
	rng := sim.NewRand(7, 1)
	rows := dirichletRows(rng, 0.1, 3, 500)
	z := make([]float64, 500)
	for x := range z {
		z[x] = rng.NormFloat64()
	}
	huge := []float64{1e308, 1e308, 0}
	cases := []struct {
		p, z  []float64
		sigma float64
	}{{rows[0], z, 0.5}, {rows[1], z, 0.76904296875}, {rows[2], z, 64}, {rows[0], z, 0},
		{huge, []float64{1, 1, 1}, 1}, {[]float64{0, 0}, []float64{1, -1}, 1}}
	for i, c := range cases {
		want := make([]float64, len(c.p))
		for x := range c.p {
			want[x] = c.p[x] * math.Exp(c.sigma*c.z[x])
		}
		sim.Normalize(want)
		wantA := sim.Alpha(c.p, want)
		got, a := perturbAlpha(make([]float64, 1), c.p, c.z, c.sigma)
		if math.Float64bits(a) != math.Float64bits(wantA) {
			t.Errorf("case %d: Σmin(p,q) = %v, want %v", i, a, wantA)
		}
		for x := range want {
			if math.Float64bits(got[x]) != math.Float64bits(want[x]) {
				t.Fatalf("case %d: q[%d] = %v, want %v", i, x, got[x], want[x])
			}
		}
	}
}
