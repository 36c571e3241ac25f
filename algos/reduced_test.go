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
