package algos

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestLeviathanTable1 reproduces Table 1 of Leviathan et al. (arXiv
// 2211.17192), c = ĉ = 0, to its printed precision (two
// decimals).
func TestLeviathanTable1(t *testing.T) {
	for _, r := range []struct {
		alpha      float64
		gamma      int
		ops, speed string
	}{
		{0.6, 2, "1.53", "1.96"}, {0.7, 3, "1.58", "2.53"}, {0.8, 2, "1.23", "2.44"},
		{0.8, 5, "1.63", "3.69"}, {0.9, 2, "1.11", "2.71"}, {0.9, 10, "1.60", "6.86"},
	} {
		ops, err := OperationsFactor(r.alpha, r.gamma, 0)
		if err != nil {
			t.Fatal(err)
		}
		speed, err := WalltimeImprovement(r.alpha, r.gamma, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%.2f", ops); got != r.ops {
			t.Errorf("α=%g γ=%d: ops %s, paper %s", r.alpha, r.gamma, got, r.ops)
		}
		if got := fmt.Sprintf("%.2f", speed); got != r.speed {
			t.Errorf("α=%g γ=%d: speed %s, paper %s", r.alpha, r.gamma, got, r.speed)
		}
	}
}

// TestLeviathanFormulas checks hand-computed values and identities.
func TestLeviathanFormulas(t *testing.T) {
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.15g, want %.15g", name, got, want)
		}
	}
	e, _ := ExpectedTokens(0.5, 3) // 1 + 1/2 + 1/4 + 1/8
	near("E(0.5, 3)", e, 1.875)
	e, _ = ExpectedTokens(1, 7)
	near("E(1, 7)", e, 8)
	e, _ = ExpectedTokens(0, 7)
	near("E(0, 7)", e, 1)
	e, _ = ExpectedTokens(2.0/3, 2) // Leviathan's post (2024): (1 - (2/3)^3)/(1/3) = 19/9
	near("E(2/3, 2)", e, 19.0/9)
	// Leviathan et al. Eq. 2: S(0.75, 7, 0.02) = (1 - 0.75^8)/(0.25·1.14) ≈ 3.2 (Table 2).
	s, _ := WalltimeImprovement(0.75, 7, 0.02)
	near("S(0.75, 7, 0.02)", s, (1-math.Pow(0.75, 8))/(0.25*1.14))
	if fmt.Sprintf("%.1f", s) != "3.2" {
		t.Errorf("S(0.75, 7, 0.02) = %.3f, Table 2 prints 3.2", s)
	}
	// Cor. 3.9: γ = 1 gives (1 + α)/(1 + c).
	s, _ = WalltimeImprovement(0.6, 1, 0.1)
	near("S(0.6, 1, 0.1)", s, 1.6/1.1)
	o, _ := OperationsFactor(0.6, 2, 0.1) // (0.4)(0.2 + 3)/(1 - 0.216)
	near("ops(0.6, 2, 0.1)", o, 0.4*3.2/0.784)
	// The closed form loses digits as α → 1 (1 - α^(γ+1) cancels), the sum
	// does not; compare where the closed form is still accurate.
	for _, a := range []float64{0.1, 0.5, 0.9, 0.99} {
		for _, g := range []int{1, 3, 10} {
			e, _ := ExpectedTokens(a, g)
			near(fmt.Sprintf("closed form E(%g, %d)", a, g), e, (1-math.Pow(a, float64(g+1)))/(1-a))
		}
	}
}

// TestBestGamma compares BestGamma with a brute-force search over
// WalltimeImprovement, and checks the c = 0 and α ≤ c cases.
func TestBestGamma(t *testing.T) {
	for _, a := range []float64{0.3, 0.6, 0.8, 0.9, 0.95} {
		for _, c := range []float64{0, 0.01, 0.05, 0.1, 0.3, 1} {
			g, s, err := BestGamma(a, c, 40)
			if err != nil {
				t.Fatal(err)
			}
			bg, bs := 0, math.Inf(-1)
			for k := 1; k <= 40; k++ {
				if v, _ := WalltimeImprovement(a, k, c); v > bs {
					bg, bs = k, v
				}
			}
			if g != bg || s != bs {
				t.Errorf("α=%g c=%g: BestGamma (%d, %g), brute force (%d, %g)", a, c, g, s, bg, bs)
			}
			if s40, _ := WalltimeImprovement(a, 40, c); c == 0 && s != s40 {
				t.Errorf("α=%g c=0: best γ %d with S = %.17g below S(40) = %.17g", a, g, s, s40)
			}
			if a <= c && s >= 1+1e-12 && g == 1 {
				t.Errorf("α=%g ≤ c=%g but γ=1 speeds up: %g", a, c, s)
			}
		}
	}
	// α = 0.8, c = 0.05, by hand from Thm 3.8: S(7) = (1 - 0.8^8)/(0.2·1.35)
	// = 3.0823, S(8) = (1 - 0.8^9)/(0.2·1.40) = 3.0921, S(9) = (1 - 0.8^10)/
	// (0.2·1.45) = 3.0780: best γ = 8.
	if g, s, _ := BestGamma(0.8, 0.05, 100); g != 8 || math.Abs(s-3.0921) > 1e-4 {
		t.Errorf("α=0.8 c=0.05: best γ %d with S = %.5f, want 8 and 3.0921", g, s)
	}
}

func TestLeviathanErrors(t *testing.T) {
	if _, err := ExpectedTokens(1.1, 3); err == nil {
		t.Error("alpha > 1 accepted")
	}
	if _, err := ExpectedTokens(math.NaN(), 3); err == nil {
		t.Error("alpha NaN accepted")
	}
	if _, err := WalltimeImprovement(0.5, 0, 0.1); err == nil {
		t.Error("gamma 0 accepted")
	}
	if _, err := OperationsFactor(0.5, 2, -1); err == nil {
		t.Error("negative c_hat accepted")
	}
	if _, _, err := BestGamma(0.5, 0.1, 0); err == nil {
		t.Error("max gamma 0 accepted")
	}
}

// TestEq1MatchesExactIID: on a context-free pair with Σmin(p, q) = α the
// exact engine's E[emitted] for token verification is Eq. 1 (the i.i.d.
// assumption holds exactly), while block verification exceeds it for γ ≥ 2.
func TestEq1MatchesExactIID(t *testing.T) {
	for _, a := range []float64{0.5, 0.7, 0.9} {
		d := (1 - a) / 2
		pair := sim.Pair{P: sim.Fixed{0.5 + d, 0.5 - d}, Q: sim.Fixed{0.5 - d, 0.5 + d}}
		for g := 1; g <= 6; g++ {
			want, _ := ExpectedTokens(a, g)
			tok := mustExact(t, pair, Token{}, sim.ExactConfig{Gamma: g, L: 1})
			blk := mustExact(t, pair, Block{}, sim.ExactConfig{Gamma: g, L: 1})
			if math.Abs(tok.ExpectedEmitted-want) > 1e-12 {
				t.Errorf("α=%g γ=%d: exact token %.15g, Eq. 1 %.15g", a, g, tok.ExpectedEmitted, want)
			}
			if g >= 2 && !(blk.ExpectedEmitted > want+1e-6) {
				t.Errorf("α=%g γ=%d: block %.6f does not exceed Eq. 1 %.6f", a, g, blk.ExpectedEmitted, want)
			}
		}
	}
}
