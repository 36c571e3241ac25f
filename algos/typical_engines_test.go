package algos

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// The engines' typical rules on a one-token draft, against the law
// written out by hand: p = (0.7, 0.2, 0.06, 0.04), so H̃ = -Σ p log(p+1e-5)
// and τ = min(0.09, 0.3·exp(-H̃)) ≈ 0.0986 is above p(2) and p(3). A draft
// of token 2 is always rejected; typical-argmax then emits argmax p = 0,
// typical-medusa a token of p truncated to {0, 1}, renormalised. A draft
// of token 1 is always kept, and the bonus comes from p_2.
func TestTypicalEnginesLaw(t *testing.T) {
	t.Parallel()
	p := []float64{0.7, 0.2, 0.06, 0.04}
	bonus := []float64{0.1, 0.2, 0.3, 0.4}
	h := 0.0
	for _, v := range p {
		h -= v * math.Log(v+1e-5)
	}
	tau := math.Min(0.09, 0.3*math.Exp(-h))
	if !(tau > 0.06 && tau < 0.2) {
		t.Fatalf("τ = %g: the example needs 0.06 < τ < 0.2", tau)
	}
	for _, c := range []struct {
		rule  sim.Lawer
		name  string
		draft int
		want  [][]float64 // want[n][t]: n tokens accepted, then token t
	}{
		{TypicalArgmax{Eps: 0.09, Delta: 0.3}, "typical-argmax", 2, [][]float64{{1, 0, 0, 0}, {0, 0, 0, 0}}},
		{TypicalMedusa{Eps: 0.09, Delta: 0.3}, "typical-medusa", 2, [][]float64{{0.7 / 0.9, 0.2 / 0.9, 0, 0}, {0, 0, 0, 0}}},
		{TypicalArgmax{Eps: 0.09, Delta: 0.3}, "typical-argmax", 1, [][]float64{{0, 0, 0, 0}, bonus}},
		{TypicalMedusa{Eps: 0.09, Delta: 0.3}, "typical-medusa", 1, [][]float64{{0, 0, 0, 0}, bonus}},
	} {
		b := &sim.Block{Tokens: []int{c.draft}, Q: []sim.Row{sim.F64([]float64{0.25, 0.25, 0.25, 0.25})},
			P: []sim.Row{sim.F64(p), sim.F64(bonus)}}
		var law sim.Law
		if err := c.rule.Law(b, &law); err != nil {
			t.Fatal(err)
		}
		for n := range c.want {
			for tok, w := range c.want[n] {
				if got := law.At(n, tok); math.Abs(got-w) > 1e-15 {
					t.Errorf("%s, draft %d: Pr(accepted %d, next %d) = %.17g, want %.17g", c.name, c.draft, n, tok, got, w)
				}
			}
		}
	}
}

// The guard moves the threshold: on p = (½, ½), H = log 2 and τ = ½
// exactly without it (typical), while the engines' H̃ = -log(½ + 10⁻⁵)
// gives τ̃ = ½ + 10⁻⁵.
func TestTypicalEntropyGuard(t *testing.T) {
	t.Parallel()
	p := sim.F64([]float64{0.5, 0.5})
	guarded := guardedThreshold(1, 1, p)
	plain := math.Min(1, math.Exp(-rowEntropy(p)))
	// H = log 2 exactly; H̃ = -log(0.5+1e-5) < H, so τ̃ > τ.
	if want := 0.5 + 1e-5; math.Abs(guarded-want) > 1e-15 || math.Abs(plain-0.5) > 1e-15 {
		t.Errorf("thresholds: guarded %.17g (want %.17g), plain %.17g (want 0.5)", guarded, want, plain)
	}
}
