package stattest

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// near reports whether a and b agree within the absolute tolerance tol.
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func hasWarning(r Result, target error) bool {
	for _, w := range r.Warnings {
		if errors.Is(w, target) {
			return true
		}
	}
	return false
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}

func TestChiSquareHandComputed(t *testing.T) {
	// obs {10,20,30,40} against the uniform law on 4 cells, N = 100, E = 25:
	// X² = (225 + 25 + 25 + 225)/25 = 20 with 3 degrees of freedom.
	r, err := ChiSquare([]int64{10, 20, 30, 40}, []float64{0.25, 0.25, 0.25, 0.25}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stat != 20 || r.DF != 3 || r.N != 100 || r.Cells != 4 || r.Pooled != 0 || len(r.Warnings) != 0 {
		t.Fatalf("got %+v, want Stat 20, DF 3, N 100, Cells 4, Pooled 0, no warnings", r)
	}
	if want := (distuv.ChiSquared{K: 3}).Survival(20); r.PValue != want {
		t.Errorf("PValue = %v, want distuv value %v", r.PValue, want)
	}
	// Independent closed form for 3 degrees of freedom,
	// P(χ²(3) > x) = erfc(sqrt(x/2)) + sqrt(2x/π)·exp(-x/2);
	// at x = 20 this is 1.697424355528264e-04 (also evaluated with mpmath at
	// 40 digits).
	closed := math.Erfc(math.Sqrt(10)) + math.Sqrt(40/math.Pi)*math.Exp(-10)
	if !near(r.PValue, closed, 1e-15) || !near(r.PValue, 1.697424355528264e-04, 1e-15) {
		t.Errorf("PValue = %.16g, want closed form %.16g", r.PValue, closed)
	}

	// obs {10,20,30} against uniform on 3 cells, E = 20:
	// X² = (100 + 0 + 100)/20 = 10, df 2, and P(χ²(2) > x) = exp(-x/2), so
	// p = exp(-5) = 6.737946999085467e-03.
	r, err = ChiSquare([]int64{10, 20, 30}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.Stat, 10, 1e-12) || r.DF != 2 {
		t.Fatalf("got Stat %v DF %d, want 10, 2", r.Stat, r.DF)
	}
	if !near(r.PValue, math.Exp(-5), 1e-14) {
		t.Errorf("PValue = %.16g, want exp(-5) = %.16g", r.PValue, math.Exp(-5))
	}
}

func TestChiSquareErrors(t *testing.T) {
	_, err := ChiSquare([]int64{1, 2}, []float64{0.5, 0.6}, 0)
	if err == nil {
		t.Error("probabilities summing to 1.1: no error")
	}
	// Rounding-level deviations are accepted (ProbTol = 1e-9).
	if _, err := ChiSquare([]int64{1, 2}, []float64{0.5, 0.5 + 1e-12}, 0); err != nil {
		t.Errorf("sum 1+1e-12: %v", err)
	}
	if _, err := ChiSquare([]int64{1, 2}, []float64{0.5, 0.5 + 1e-8}, 0); err == nil {
		t.Error("sum 1+1e-8: no error")
	}
	if _, err := ChiSquare([]int64{-1, 2}, []float64{0.5, 0.5}, 0); err == nil {
		t.Error("negative count: no error")
	}
	if _, err := ChiSquare([]int64{1, 2}, []float64{math.NaN(), 1}, 0); err == nil {
		t.Error("NaN probability: no error")
	}
	if _, err := ChiSquare(nil, nil, 0); err == nil {
		t.Error("empty input: no error")
	}
	mustPanic(t, "length mismatch", func() { ChiSquare([]int64{1}, []float64{0.5, 0.5}, 0) })
	mustPanic(t, "Pool length mismatch", func() { Pool([]int64{1}, []float64{0.5, 0.5}, 5) })
}

func TestPool(t *testing.T) {
	for _, tc := range []struct {
		name      string
		obs       []int64
		probs     []float64
		min       float64
		wantObs   []int64
		wantProbs []float64
	}{
		{
			// n = 20; expected 1, 1, 10, 4, 4. Running cells: 1+1+10 = 12 >= 5
			// emits {0,1,2}; 4+4 = 8 >= 5 emits {3,4}.
			name:      "merge",
			obs:       []int64{2, 3, 10, 1, 4},
			probs:     []float64{0.05, 0.05, 0.5, 0.2, 0.2},
			min:       5,
			wantObs:   []int64{15, 5},
			wantProbs: []float64{0.6, 0.4},
		},
		{
			// n = 21; expected 9.45, 9.45, 2.1: the trailing 2.1 joins the last
			// kept cell.
			name:      "trailing remainder",
			obs:       []int64{10, 10, 1},
			probs:     []float64{0.45, 0.45, 0.1},
			min:       5,
			wantObs:   []int64{10, 11},
			wantProbs: []float64{0.45, 0.55},
		},
		{
			name:      "zero cell dropped",
			obs:       []int64{10, 0, 10},
			probs:     []float64{0.5, 0, 0.5},
			min:       5,
			wantObs:   []int64{10, 10},
			wantProbs: []float64{0.5, 0.5},
		},
		{
			// n = 16; the impossible cell (p = 0, obs 3) is emitted on its own
			// when met; expected 1.6, 1.6, 12.8 accumulate into one cell.
			name:      "impossible kept",
			obs:       []int64{1, 3, 2, 10},
			probs:     []float64{0.1, 0, 0.1, 0.8},
			min:       5,
			wantObs:   []int64{3, 13},
			wantProbs: []float64{0, 1},
		},
		{
			// n = 2: no cell reaches 5, the remainder is emitted on its own.
			name:      "single remainder",
			obs:       []int64{1, 1},
			probs:     []float64{0.5, 0.5},
			min:       5,
			wantObs:   []int64{2},
			wantProbs: []float64{1},
		},
		{
			name:      "no pooling needed",
			obs:       []int64{5, 6, 7},
			probs:     []float64{0.3, 0.3, 0.4},
			min:       5,
			wantObs:   []int64{5, 6, 7},
			wantProbs: []float64{0.3, 0.3, 0.4},
		},
	} {
		gotObs, gotProbs := Pool(tc.obs, tc.probs, tc.min)
		if !slices.Equal(gotObs, tc.wantObs) || len(gotProbs) != len(tc.wantProbs) {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, gotObs, gotProbs, tc.wantObs, tc.wantProbs)
			continue
		}
		for i := range gotProbs {
			if !near(gotProbs[i], tc.wantProbs[i], 1e-15) {
				t.Errorf("%s: probs %v, want %v", tc.name, gotProbs, tc.wantProbs)
			}
		}
	}
}

func TestChiSquareImpossible(t *testing.T) {
	r, err := ChiSquare([]int64{1, 3, 2, 10}, []float64{0.1, 0, 0.1, 0.8}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(r.Stat, 1) || r.PValue != 0 || r.DF != 1 || r.Cells != 2 || r.Pooled != 2 {
		t.Errorf("got %+v, want Stat +Inf, PValue 0, DF 1, Cells 2, Pooled 2", r)
	}
	if !hasWarning(r, ErrImpossible) {
		t.Errorf("warnings %v lack ErrImpossible", r.Warnings)
	}
}

func TestChiSquareDegenerate(t *testing.T) {
	r, err := ChiSquare([]int64{1, 1}, []float64{0.5, 0.5}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.DF != 0 || r.PValue != 1 || r.Cells != 1 || !hasWarning(r, ErrTooFewCells) {
		t.Errorf("got %+v, want DF 0, PValue 1, Cells 1, ErrTooFewCells", r)
	}
	r, err = ChiSquare([]int64{0, 0}, []float64{0.5, 0.5}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 0 || r.PValue != 1 || !hasWarning(r, ErrNoData) || !hasWarning(r, ErrTooFewCells) {
		t.Errorf("got %+v, want N 0, PValue 1, ErrNoData and ErrTooFewCells", r)
	}
}

func TestTable(t *testing.T) {
	var tab Table
	// Group sizes and statistics from TestChiSquareHandComputed: X² = 20 on
	// 3 df and X² = 10 on 2 df; an empty group adds one cell and no df.
	if err := tab.Add([]int64{10, 20, 30, 40}, []float64{0.25, 0.25, 0.25, 0.25}); err != nil {
		t.Fatal(err)
	}
	if err := tab.Add([]int64{10, 20, 30}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}); err != nil {
		t.Fatal(err)
	}
	if err := tab.Add([]int64{0, 0}, []float64{0.5, 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := tab.Add([]int64{1, 2}, []float64{0.5, 0.6}); err == nil {
		t.Error("bad group accepted")
	}
	if tab.Len() != 3 {
		t.Fatalf("Len = %d, want 3", tab.Len())
	}
	r, err := tab.Test(0)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.Stat, 30, 1e-12) || r.DF != 5 || r.N != 160 || r.Cells != 8 || r.Pooled != 1 {
		t.Fatalf("got %+v, want Stat 30, DF 5, N 160, Cells 8, Pooled 1", r)
	}
	if want := (distuv.ChiSquared{K: 5}).Survival(r.Stat); r.PValue != want {
		t.Errorf("PValue = %v, want %v", r.PValue, want)
	}

	if err := tab.Add([]int64{3, 1}, []float64{1, 0}); err != nil {
		t.Fatal(err)
	}
	r, _ = tab.Test(0)
	if !math.IsInf(r.Stat, 1) || r.PValue != 0 || !hasWarning(r, ErrImpossible) {
		t.Errorf("impossible group: got %+v", r)
	}

	var empty Table
	r, _ = empty.Test(0)
	if r.PValue != 1 || !hasWarning(r, ErrNoData) {
		t.Errorf("empty table: got %+v", r)
	}
}

func TestHolm(t *testing.T) {
	// Hand-worked, m = 4. Sorted: 0.005 (#3), 0.01 (#0), 0.03 (#2), 0.04 (#1).
	// Products: 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, 1·0.04 = 0.04;
	// running maximum: 0.02, 0.03, 0.06, 0.06.
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-15) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	// Capping: 3·0.4 = 1.2 -> 1, and monotonicity keeps the rest at 1.
	got = Holm([]float64{0.6, 0.4, 0.7})
	if !slices.Equal(got, []float64{1, 1, 1}) {
		t.Errorf("Holm = %v, want all 1", got)
	}
	if got := Holm(nil); len(got) != 0 {
		t.Errorf("Holm(nil) = %v", got)
	}
	mustPanic(t, "p > 1", func() { Holm([]float64{1.5}) })
	mustPanic(t, "NaN p", func() { Holm([]float64{math.NaN()}) })
}

func TestNoncentralLambdaZero(t *testing.T) {
	for _, k := range []int{1, 2, 5, 30} {
		for _, x := range []float64{0.1, 1, 3, 10, 50} {
			want := distuv.ChiSquared{K: float64(k)}.Survival(x)
			if got := NoncentralChiSquaredSurvival(x, k, 0); got != want {
				t.Errorf("k=%d x=%v: got %v, want central %v", k, x, got, want)
			}
			// Continuity at λ = 0: the λ-derivative is at most ½ in modulus.
			if got := NoncentralChiSquaredSurvival(x, k, 1e-9); !near(got, want, 1e-9) {
				t.Errorf("k=%d x=%v λ=1e-9: got %v, want ~%v", k, x, got, want)
			}
		}
	}
	if NoncentralChiSquaredSurvival(-1, 3, 2) != 1 || NoncentralChiSquaredSurvival(math.Inf(1), 3, 2) != 0 {
		t.Error("boundary values wrong")
	}
	mustPanic(t, "k=0", func() { NoncentralChiSquaredSurvival(1, 0, 1) })
	mustPanic(t, "λ<0", func() { NoncentralChiSquaredSurvival(1, 1, -1) })
}

func TestNoncentralOneDF(t *testing.T) {
	// Exact identity for k = 1: X = (Z + √λ)², so
	// P(X > x) = P(Z > √x - √λ) + P(Z < -√x - √λ).
	for _, lambda := range []float64{0.01, 0.5, 2, 7.85, 25, 100, 400} {
		for _, x := range []float64{0.01, 0.5, 1, 3.841458820694124, 10, 40, 150} {
			sx, sl := math.Sqrt(x), math.Sqrt(lambda)
			want := distuv.UnitNormal.Survival(sx-sl) + distuv.UnitNormal.CDF(-sx-sl)
			got := NoncentralChiSquaredSurvival(x, 1, lambda)
			if !near(got, want, 1e-12) {
				t.Errorf("x=%v λ=%v: got %.16g, want %.16g (diff %g)", x, lambda, got, want, got-want)
			}
		}
	}
}

func TestNoncentralKnownValues(t *testing.T) {
	// Reference values from the Poisson mixture evaluated with mpmath 1.3.0
	// at 40 significant digits (mpmath.nsum over j of Pois(j; λ/2) times
	// gammainc(k/2+j, x/2, inf, regularized=True)).
	for _, tc := range []struct {
		x      float64
		k      int
		lambda float64
		want   float64
	}{
		{5, 3, 4, 0.6006658104629985924},
		{12, 5, 10, 0.6219225734485760083},
		{40, 10, 50, 0.9224337180343822536},
		{1, 1, 0.5, 0.4287029896132541144},
		{100, 20, 30, 5.541996380411517122e-4},
		{0.5, 2, 20, 0.9999718752093831930},
	} {
		got := NoncentralChiSquaredSurvival(tc.x, tc.k, tc.lambda)
		if !near(got, tc.want, 1e-13) {
			t.Errorf("x=%v k=%d λ=%v: got %.16g, want %.16g", tc.x, tc.k, tc.lambda, got, tc.want)
		}
	}
}

func TestNoncentralMonteCarlo(t *testing.T) {
	// X = (Z_1 + √λ)² + Z_2² + ... + Z_k² with independent standard normals
	// is χ²(k, λ). With n samples, Hoeffding's inequality bounds the
	// empirical exceedance frequency: P(|p̂ - p| >= ε) <= 2·exp(-2nε²), so
	// ε = sqrt(ln(2/δ)/(2n)) = 0.0060 for n = 2e5, δ = 1e-6.
	const (
		n     = 200000
		delta = 1e-6
	)
	eps := math.Sqrt(math.Log(2/delta) / (2 * n))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		k      int
		lambda float64
		xs     []float64
	}{
		{3, 4, []float64{2, 5, 10, 20}},
		{6, 12, []float64{8, 15, 25}},
	} {
		shift := math.Sqrt(tc.lambda)
		exceed := make([]int, len(tc.xs))
		for range n {
			v := rng.NormFloat64() + shift
			s := v * v
			for range tc.k - 1 {
				z := rng.NormFloat64()
				s += z * z
			}
			for i, x := range tc.xs {
				if s > x {
					exceed[i]++
				}
			}
		}
		for i, x := range tc.xs {
			phat := float64(exceed[i]) / n
			want := NoncentralChiSquaredSurvival(x, tc.k, tc.lambda)
			if !near(phat, want, eps) {
				t.Errorf("k=%d λ=%v x=%v: Monte Carlo %v, computed %v, bound %v", tc.k, tc.lambda, x, phat, want, eps)
			}
		}
	}
}

func TestRequiredNoncentrality(t *testing.T) {
	for _, tc := range []struct {
		df           int
		level, power float64
	}{
		{1, 0.05, 0.8}, {3, 0.05, 0.8}, {9, 0.05, 0.8}, {9, 0.01, 0.95}, {50, 1e-4, 0.9}, {2, 0.05, 0.06},
	} {
		lambda := RequiredNoncentrality(tc.df, tc.level, tc.power)
		c := distuv.ChiSquared{K: float64(tc.df)}.Quantile(1 - tc.level)
		got := NoncentralChiSquaredSurvival(c, tc.df, lambda)
		if got < tc.power || got > tc.power+1e-6 {
			t.Errorf("df=%d level=%v power=%v: λ=%v gives power %v", tc.df, tc.level, tc.power, lambda, got)
		}
	}
	// df = 1: the root of Φ(√λ - z) + Φ(-√λ - z) = 0.8 with z = Φ⁻¹(0.975),
	// 7.848860509326196 (mpmath findroot, 40 digits). The textbook
	// approximation (z_{0.975} + z_{0.8})² = (1.959964 + 0.841621)² = 7.848879
	// drops the lower tail Φ(-√λ - z) ≈ 1e-6, hence the 1e-4 agreement.
	got := RequiredNoncentrality(1, 0.05, 0.8)
	if !near(got, 7.848860509326196, 1e-8) {
		t.Errorf("df=1: got %.12g, want 7.848860509326196", got)
	}
	if !near(got, math.Pow(1.959964+0.841621, 2), 1e-4) {
		t.Errorf("df=1: got %.12g, want ≈ (1.959964+0.841621)²", got)
	}
	// df = 3: 10.90256329013327 (mpmath findroot on the Poisson mixture);
	// Cohen (1988), ch. 7, tabulates λ = 10.90 for u = 3, α = .05, power .80.
	if got := RequiredNoncentrality(3, 0.05, 0.8); !near(got, 10.90256329013327, 1e-8) {
		t.Errorf("df=3: got %.12g, want 10.90256329013327", got)
	}
	// df = 9: 15.64979789518821 (mpmath findroot, as above).
	if got := RequiredNoncentrality(9, 0.05, 0.8); !near(got, 15.64979789518821, 1e-8) {
		t.Errorf("df=9: got %.12g, want 15.64979789518821", got)
	}
	if got := RequiredNoncentrality(4, 0.05, 0.05); got != 0 {
		t.Errorf("power == level: got %v, want 0", got)
	}
	mustPanic(t, "level 0", func() { RequiredNoncentrality(1, 0, 0.8) })
	mustPanic(t, "power 1", func() { RequiredNoncentrality(1, 0.05, 1) })
	mustPanic(t, "df 0", func() { RequiredNoncentrality(0, 0.05, 0.8) })
}

func TestMinDetectableTV(t *testing.T) {
	const (
		df    = 9
		level = 0.05
		power = 0.8
	)
	lambda := RequiredNoncentrality(df, level, power)
	for _, n := range []int64{1, 100, 12345, 1e9} {
		got := MinDetectableTV(n, df, level, power)
		if want := math.Sqrt(lambda / (4 * float64(n))); got != want {
			t.Errorf("n=%d: got %v, want sqrt(λ/(4n)) = %v", n, got, want)
		}
		// TV ∝ 1/√n: quadrupling n halves it, ×100 divides it by 10.
		if r := MinDetectableTV(4*n, df, level, power) / got; !near(r, 0.5, 1e-15) {
			t.Errorf("n=%d: ratio TV(4n)/TV(n) = %v, want 0.5", n, r)
		}
		if r := MinDetectableTV(100*n, df, level, power) / got; !near(r, 0.1, 1e-15) {
			t.Errorf("n=%d: ratio TV(100n)/TV(n) = %v, want 0.1", n, r)
		}
	}
	if got := MinDetectableTV(0, df, level, power); !math.IsInf(got, 1) {
		t.Errorf("n=0: got %v, want +Inf", got)
	}
	mustPanic(t, "n<0", func() { MinDetectableTV(-1, df, level, power) })
}

// multinomial draws n observations from the categorical law with
// cumulative probabilities cum into counts, which it zeroes first.
func multinomial(rng *rand.Rand, n int, cum []float64, counts []int64) {
	clear(counts)
	for range n {
		u := rng.Float64()
		i, _ := slices.BinarySearch(cum, u)
		if i >= len(counts) {
			i = len(counts) - 1
		}
		counts[i]++
	}
}

func cumulative(p []float64) []float64 {
	c := make([]float64, len(p))
	var s float64
	for i, v := range p {
		s += v
		c[i] = s
	}
	return c
}

func TestSimulatedLevelAndPower(t *testing.T) {
	const (
		reps  = 2000
		level = 0.05
		power = 0.8
		delta = 1e-6
	)
	rng := rand.New(rand.NewPCG(1, 2))

	// Under H0, with sparse tail cells so that pooling is exercised: with
	// n = 400 the expected counts of the last three cells are 4, 2, 2 and are
	// merged. The rejection count must lie in the two-sided binomial
	// acceptance range, [56, 151] (exact binomial tails computed with
	// mpmath).
	p0 := []float64{0.3, 0.2, 0.15, 0.1, 0.08, 0.06, 0.04, 0.03, 0.02, 0.01, 0.005, 0.005}
	cum := cumulative(p0)
	counts := make([]int64, len(p0))
	var rejected int
	for range reps {
		multinomial(rng, 400, cum, counts)
		r, err := ChiSquare(counts, p0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.PValue < level {
			rejected++
		}
	}
	lo, hi := BinomialAcceptance(reps, level, delta)
	if lo != 56 || hi != 151 {
		t.Errorf("BinomialAcceptance(%d, %v, %v) = [%d, %d], want [56, 151]", reps, level, delta, lo, hi)
	}
	if rejected < lo || rejected > hi {
		t.Errorf("H0: %d rejections in %d, outside [%d, %d]", rejected, reps, lo, hi)
	}
	t.Logf("H0: %d/%d rejections, acceptance range [%d, %d]", rejected, reps, lo, hi)

	// Under the least favourable alternative at the minimum detectable TV:
	// π_i = p_i(1 ± 2·TV) with balanced signs attains the Cauchy–Schwarz
	// bound, λ = 4n·TV² = λ_req. The rejection count must reach the lower
	// end of the binomial acceptance range for rejection probability power.
	const (
		k = 10
		n = 1000
	)
	tv := MinDetectableTV(n, k-1, level, power)
	pu := make([]float64, k)
	alt := make([]float64, k)
	var tvCheck float64
	for i := range k {
		pu[i] = 1.0 / k
		s := 1.0
		if i >= k/2 {
			s = -1
		}
		alt[i] = pu[i] * (1 + 2*s*tv)
		tvCheck += math.Abs(alt[i]-pu[i]) / 2
	}
	if !near(tvCheck, tv, 1e-15) {
		t.Fatalf("alternative has TV %v, want %v", tvCheck, tv)
	}
	cum = cumulative(alt)
	counts = make([]int64, k)
	rejected = 0
	for range reps {
		multinomial(rng, n, cum, counts)
		r, err := ChiSquare(counts, pu, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.DF != k-1 {
			t.Fatalf("DF = %d, want %d", r.DF, k-1)
		}
		if r.PValue < level {
			rejected++
		}
	}
	lo, _ = BinomialAcceptance(reps, power, delta)
	if rejected < lo {
		t.Errorf("H1 at TV %v: %d rejections in %d, below %d", tv, rejected, reps, lo)
	}
	t.Logf("H1 at TV %.4f: %d/%d rejections, lower bound %d", tv, rejected, reps, lo)
}

func TestBinomialAcceptance(t *testing.T) {
	for _, tc := range []struct {
		n            int
		level, delta float64
	}{
		{2000, 0.05, 1e-6}, {100, 0.05, 0.01}, {10, 0.5, 0.1}, {1, 0.3, 0.5}, {50000, 0.001, 1e-3},
	} {
		lo, hi := BinomialAcceptance(tc.n, tc.level, tc.delta)
		b := distuv.Binomial{N: float64(tc.n), P: tc.level}
		below := b.CDF(float64(lo - 1))
		above := 1 - b.CDF(float64(hi))
		if below > tc.delta/2 || above > tc.delta/2*(1+1e-9) {
			t.Errorf("%+v: [%d, %d] has tails %v, %v", tc, lo, hi, below, above)
		}
		// Tightness: widening stops as soon as the tail bound is met.
		if b.CDF(float64(lo)) <= tc.delta/2 {
			t.Errorf("%+v: lo = %d not minimal-width", tc, lo)
		}
		if hi > 0 && 1-b.CDF(float64(hi-1)) <= tc.delta/2*(1-1e-9) {
			t.Errorf("%+v: hi = %d not minimal-width", tc, hi)
		}
	}
	if lo, hi := BinomialAcceptance(0, 0.05, 0.01); lo != 0 || hi != 0 {
		t.Errorf("n=0: [%d, %d]", lo, hi)
	}
	mustPanic(t, "level 1", func() { BinomialAcceptance(10, 1, 0.01) })
}

func TestWilson(t *testing.T) {
	// k = 81, n = 263 at 95%: p̂ = 0.30798, z = 1.959964, and the Wilson
	// formula gives [0.2552885198782742, 0.3662095769828001] (evaluated with
	// mpmath at 40 digits), i.e. [0.2553, 0.3662] to four places.
	lo, hi := Wilson(81, 263, 0.95)
	if !near(lo, 0.2552885198782742, 1e-12) || !near(hi, 0.3662095769828001, 1e-12) {
		t.Errorf("got [%.16g, %.16g]", lo, hi)
	}
	if math.Round(lo*1e4)/1e4 != 0.2553 || math.Round(hi*1e4)/1e4 != 0.3662 {
		t.Errorf("got [%.4f, %.4f], want [0.2553, 0.3662]", lo, hi)
	}
	// Boundaries: k = 0 gives lo = 0 and hi = z²/(n+z²); k = n mirrors it.
	z2 := math.Pow(distuv.UnitNormal.Quantile(0.975), 2)
	lo, hi = Wilson(0, 20, 0.95)
	if lo != 0 || !near(hi, z2/(20+z2), 1e-15) {
		t.Errorf("k=0: got [%v, %v], want [0, %v]", lo, hi, z2/(20+z2))
	}
	lo, hi = Wilson(20, 20, 0.95)
	if hi != 1 || !near(lo, 20/(20+z2), 1e-15) {
		t.Errorf("k=n: got [%v, %v], want [%v, 1]", lo, hi, 20/(20+z2))
	}
	if lo, hi := Wilson(0, 0, 0.95); lo != 0 || hi != 1 {
		t.Errorf("n=0: got [%v, %v]", lo, hi)
	}
	mustPanic(t, "k>n", func() { Wilson(3, 2, 0.95) })
	mustPanic(t, "confidence 1", func() { Wilson(1, 2, 1) })
}

func TestSummarize(t *testing.T) {
	// Samples 1..5: mean 3, variance (55 - 5·9)/4 = 2.5, and the 95% half
	// width is 1.959964·sqrt(2.5/5) = 1.385904.
	xs := []float64{1, 2, 3, 4, 5}
	var sum, sumSq float64
	var m Moments
	for _, x := range xs {
		sum += x
		sumSq += x * x
		m.Add(x)
	}
	// Sums of the two halves, merged: 1+2 + 3+4+5 = 15 and 1+4 + 9+16+25 =
	// 55, exact in float64.
	var first, rest Sums
	for _, x := range xs[:2] {
		first.Add(x)
	}
	for _, x := range xs[2:] {
		rest.Add(x)
	}
	first.Merge(rest)
	if first != (Sums{N: 5, Sum: 15, SumSq: 55}) {
		t.Errorf("merged sums %+v, want {5 15 55}", first)
	}
	z := distuv.UnitNormal.Quantile(0.975)
	half := z * math.Sqrt(2.5/5)
	for _, s := range []Summary{Summarize(sum, sumSq, 5, 0.95), m.Summary(0.95), first.Summary(0.95)} {
		if s.N != 5 || s.Mean != 3 || !near(s.StdDev, math.Sqrt(2.5), 1e-15) ||
			!near(s.Lo, 3-half, 1e-14) || !near(s.Hi, 3+half, 1e-14) || s.Confidence != 0.95 {
			t.Errorf("got %+v, want mean 3, sd %v, CI [%v, %v]", s, math.Sqrt(2.5), 3-half, 3+half)
		}
	}
	if !near(half, 1.385904, 1e-6) {
		t.Errorf("half width %v, want 1.385904", half)
	}
	// Welford stays exact where the running-sum formula cancels.
	var w Moments
	for _, x := range xs {
		w.Add(1e9 + x)
	}
	if s := w.Summary(0.95); !near(s.StdDev, math.Sqrt(2.5), 1e-6) {
		t.Errorf("Welford sd %v, want %v", s.StdDev, math.Sqrt(2.5))
	}
	s := Summarize(0, 0, 0, 0.95)
	if !math.IsNaN(s.Mean) || !math.IsInf(s.Lo, -1) || !math.IsInf(s.Hi, 1) {
		t.Errorf("n=0: got %+v", s)
	}
	s = Summarize(7, 49, 1, 0.95)
	if s.Mean != 7 || !math.IsNaN(s.StdDev) || !math.IsInf(s.Hi, 1) {
		t.Errorf("n=1: got %+v", s)
	}
	mustPanic(t, "n<0", func() { Summarize(0, 0, -1, 0.95) })
}

// TestSmallSample: the t interval of {1, 2, 3, 4} by hand: mean 2.5,
// sd √(5/3), t_3(0.975) = 3.182446305284263 (tables), half-width
// t·sd/2; one sample has an unbounded interval.
func TestSmallSample(t *testing.T) {
	s := SmallSample([]float64{1, 2, 3, 4}, 0.95)
	sd := math.Sqrt(5.0 / 3)
	half := 3.182446305284263 * sd / 2
	if s.N != 4 || s.Mean != 2.5 || !near(s.StdDev, sd, 1e-15) || !near(s.Lo, 2.5-half, 1e-9) || !near(s.Hi, 2.5+half, 1e-9) {
		t.Errorf("SmallSample({1,2,3,4}) = %+v; want mean 2.5, sd %v, interval 2.5 ∓ %v", s, sd, half)
	}
	if one := SmallSample([]float64{7}, 0.95); one.Mean != 7 || !math.IsNaN(one.StdDev) || !math.IsInf(one.Lo, -1) || !math.IsInf(one.Hi, 1) {
		t.Errorf("one sample: %+v", one)
	}
	if none := SmallSample(nil, 0.95); !math.IsNaN(none.Mean) {
		t.Errorf("no sample: %+v", none)
	}
}

// TopResiduals ranks cells by Pearson's standardised residual: a group of
// 100 observations with one cell 10 above its expected 25 and another 10
// below, the rest on expectation.
func TestTopResiduals(t *testing.T) {
	tb := &Table{}
	if err := tb.Add([]int64{35, 15, 25, 25}, []float64{0.25, 0.25, 0.25, 0.25}); err != nil {
		t.Fatal(err)
	}
	top := tb.TopResiduals(2)
	if len(top) != 2 || top[0].Cell != 0 || top[1].Cell != 1 || top[0].Z != 2 || top[1].Z != -2 || top[0].Exp != 25 {
		t.Errorf("top residuals %+v, want cells 0 (z = 2) and 1 (z = -2)", top)
	}
	h := NewHetero(3)
	for range 10 {
		h.Add([]float64{0.5, 0.5, 0}, 0)
	}
	hr := h.TopResiduals(1)
	if len(hr) != 1 || hr[0].Cell != 0 || hr[0].Obs != 10 || hr[0].Exp != 5 {
		t.Errorf("hetero top residual %+v, want cell 0 with 10 observed against 5", hr)
	}
}
