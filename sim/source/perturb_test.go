package source

import (
	"math"
	"slices"
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

// TestCalibrationRows: a pool calibrated on a sample of its draft rows
// reaches Beta within calibTol on the sample (its first rows, in float64
// before rounding to the pool's float32), reports the mean over every row
// as MeanBeta, and draws the same target rows and noise as the pool
// calibrated on every row (only σ differs).
func TestCalibrationRows(t *testing.T) {
	c := Dirichlet{Shape: Shape{V: 200, Gamma: 3, Contexts: 40}, A: 0.1, Beta: 0.6}
	full, err := c.Pool(sim.NewRand(5, 1))
	if err != nil {
		t.Fatal(err)
	}
	c.CalibrationRows = 12
	part, err := c.Pool(sim.NewRand(5, 1))
	if err != nil {
		t.Fatal(err)
	}
	if part.Sigma == full.Sigma {
		t.Errorf("σ %g calibrated on 12 rows equals the full pool's", part.Sigma)
	}
	for i := range full.P {
		if !slices.Equal(full.P[i], part.P[i]) {
			t.Fatalf("target row %d differs", i)
		}
	}
	s := 0.0
	for qi := range 12 {
		p := part.P[qi/c.Gamma*(c.Gamma+1)+qi%c.Gamma]
		for x, q := range part.Q[qi] {
			s += math.Min(float64(p[x]), float64(q))
		}
	}
	if got := s / 12; math.Abs(got-c.Beta) > calibTol+1e-6 { // float32 rounding of the rows
		t.Errorf("mean β over the 12 calibration rows %.6f, want %g within %g", got, c.Beta, calibTol)
	}
	all := 0.0
	for qi, q := range part.Q {
		p := part.P[qi/c.Gamma*(c.Gamma+1)+qi%c.Gamma]
		for x := range q {
			all += math.Min(float64(p[x]), float64(q[x]))
		}
	}
	if want := all / float64(len(part.Q)); part.MeanBeta != want {
		t.Errorf("MeanBeta %g, want the mean over every row %g", part.MeanBeta, want)
	}
}
