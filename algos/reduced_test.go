package algos

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReducedPrecisionTable: ReducedPrecision's weights from the bf16Weights
// table equal math.Exp(bf16(ℓ) - reducedTopLogit) to the bit, for
// probabilities spread over 300 decades below the row's top entry and at
// the top itself (ℓ = 30, which bfloat16 holds exactly, gives weight 1).
func TestReducedPrecisionTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := ReducedPrecision{}
	for i := 0; i < 200000; i++ {
		top := rng.Float64()
		v := top * math.Pow(10, -300*rng.Float64())
		want := math.Exp(bf16(math.Log(v/top)+reducedTopLogit) - reducedTopLogit)
		if got := m.pow(v, top); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("pow(%g, %g) = %v, want %v", v, top, got, want)
		}
	}
	if got := m.pow(0.25, 0.25); got != 1 {
		t.Errorf("pow at the top entry = %v, want 1", got)
	}
	if got := m.pow(0, 0.25); got != 0 {
		t.Errorf("pow(0) = %v, want 0", got)
	}
}

// TestQMismatchDyadicPow: for T = k/64 in (0, 1) QMismatch's weight, a
// product of square roots, equals math.Pow(v, T) to a relative 1e-13 on
// probabilities over 300 decades (each correctly rounded square root adds
// at most half an ulp; math.Pow itself is off by tens of ulps near 1e-120,
// where the product matches a 50-digit reference), and is math.Sqrt(v)
// itself at T = 0.5.
func TestQMismatchDyadicPow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, T := range []float64{0.5, 0.75, 0.9375, 1.0 / 64, 63.0 / 64} {
		m := QMismatch{T: T}
		if _, ok := m.dyadic(); !ok {
			t.Fatalf("T = %g not taken as dyadic", T)
		}
		for i := 0; i < 20000; i++ {
			v := math.Pow(10, -300*rng.Float64())
			got, want := m.pow(v, 1), math.Pow(v, T)
			if math.Abs(got-want) > 1e-13*want {
				t.Fatalf("T = %g: pow(%g) = %v, math.Pow %v", T, v, got, want)
			}
			if T == 0.5 && got != math.Sqrt(v) {
				t.Fatalf("T = 0.5: pow(%g) = %v, not math.Sqrt's %v", v, got, math.Sqrt(v))
			}
		}
	}
	for _, T := range []float64{0.9, 1, 1.5, 1.0 / 128} {
		if _, ok := (QMismatch{T: T}).dyadic(); ok {
			t.Errorf("T = %g taken as a dyadic fraction in (0, 1)", T)
		}
	}
}
