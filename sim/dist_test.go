package sim_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
)

// The two-token pair of block verification (Sun et al. 2024, arXiv
// 2403.10444; docs/rules.md#papers): p = (1/3, 2/3), q = (2/3, 1/3). By hand:
// Σmin = 1/3 + 1/3 = 2/3; TV = ½(1/3 + 1/3) = 1/3;
// KL(p‖q) = 1/3·log(1/2) + 2/3·log 2 = (1/3) log 2;
// JS = log 2 − H(m) ... computed below from its definition with m = (1/2, 1/2).
var pSeed, qSeed = []float64{1.0 / 3, 2.0 / 3}, []float64{2.0 / 3, 1.0 / 3}

func TestKnownValues(t *testing.T) {
	t.Parallel()
	js := 0.5*(1.0/3*math.Log(2.0/3)+2.0/3*math.Log(4.0/3)) + 0.5*(2.0/3*math.Log(4.0/3)+1.0/3*math.Log(2.0/3))
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"alpha", sim.Alpha(pSeed, qSeed), 2.0 / 3},
		{"tv", sim.TV(pSeed, qSeed), 1.0 / 3},
		{"alpha = 1 - tv", sim.Alpha(pSeed, qSeed), 1 - sim.TV(pSeed, qSeed)},
		{"kl", sim.KL(pSeed, qSeed), math.Log(2) / 3},
		{"kl reverse", sim.KL(qSeed, pSeed), math.Log(2) / 3},
		{"js", sim.JS(pSeed, qSeed), js},
		{"entropy uniform", sim.Entropy([]float64{0.25, 0.25, 0.25, 0.25}), math.Log(4)},
		{"alpha p=q", sim.Alpha(pSeed, pSeed), 1},
		{"alpha disjoint", sim.Alpha([]float64{1, 0}, []float64{0, 1}), 0},
		{"kl support", sim.KL([]float64{0.5, 0.5}, []float64{1, 0}), math.Inf(1)},
	} {
		if math.Abs(c.got-c.want) > 1e-15 && !(math.IsInf(c.want, 1) && math.IsInf(c.got, 1)) {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
	r, mass := sim.Residual(nil, pSeed, qSeed)
	if math.Abs(mass-1.0/3) > 1e-15 || r[0] != 0 || math.Abs(r[1]-1) > 1e-15 {
		t.Errorf("residual = %v with mass %g, want [0 1] with 1/3", r, mass)
	}
	if _, m := sim.Residual(nil, pSeed, pSeed); m != 0 {
		t.Errorf("residual mass of p vs p = %g, want 0", m)
	}
	if got := sim.Temperature(nil, pSeed, 1); math.Abs(got[0]-pSeed[0]) > 1e-15 {
		t.Errorf("temperature 1 changed p: %v", got)
	}
	// T = 1/2 squares: (1/9, 4/9)/(5/9) = (1/5, 4/5).
	if got := sim.Temperature(nil, pSeed, 0.5); math.Abs(got[0]-0.2) > 1e-15 || math.Abs(got[1]-0.8) > 1e-15 {
		t.Errorf("temperature 1/2 = %v, want [0.2 0.8]", got)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p    []float64
		want string
	}{
		{nil, "empty"},
		{[]float64{math.NaN(), 1}, "NaN"},
		{[]float64{math.Inf(1), 0}, "+Inf"},
		{[]float64{-0.1, 1.1}, "negative"},
		{[]float64{0.5, 0.4}, "sums to 0.9"},
	} {
		err := sim.Validate("p", c.p)
		if err == nil || !errors.Is(err, sim.ErrBadDist) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want an ErrBadDist naming %q", c.p, err, c.want)
		}
	}
	if err := sim.ValidatePair([]float64{1}, []float64{0.5, 0.5}); err == nil || !strings.Contains(err.Error(), "mismatch") {
		t.Errorf("ValidatePair on lengths 1 and 2 = %v, want a vocabulary mismatch", err)
	}
	if err := sim.Validate("p", []float64{0.5, 0.5 + 5e-5}); err != nil {
		t.Errorf("a sum within SumTol was rejected: %v", err)
	}
}
