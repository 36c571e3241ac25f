package algos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
)

// Tests of the lossy rules. Seeds are fixed; a seed reproduces a failure
// only at the same commit and Go toolchain.

// lossyRandDist draws a Dirichlet(a) distribution over v tokens with rng; with
// zeros set, each entry is zeroed with probability 1/4 (at least one entry
// stays positive).
func lossyRandDist(rng *rand.Rand, v int, a float64, zeros bool) []float64 {
	p := make([]float64, v)
	for {
		for i := range p {
			// Gamma(a) for a < 1 via Gamma(a+1)·U^(1/a) (Marsaglia–Tsang boost).
			p[i] = sim.GammaRand(rng, a+1) * math.Pow(rng.Float64(), 1/a)
			if zeros && rng.IntN(4) == 0 {
				p[i] = 0
			}
		}
		if sim.Normalize(p) > 0 {
			return p
		}
	}
}

// randPair draws a target and a draft; kind 0: both positive, 1: zeros in
// p (q puts mass where p = 0), 2: zeros in q, 3: zeros in both.
func randPair(rng *rand.Rand, v, kind int) (p, q []float64) {
	a := []float64{0.3, 1, 3}[rng.IntN(3)]
	for {
		p = lossyRandDist(rng, v, a, kind == 1 || kind == 3)
		q = lossyRandDist(rng, v, a, kind == 2 || kind == 3)
		if sim.Alpha(p, q) > 0 { // a draft with no overlap accepts nothing under any rule
			return p, q
		}
	}
}

// klTol is the stated accuracy of the mentored solvers on KL(p‖π): the
// exact solver lands at rounding level, the bisection within
// MentoredTol·D; both are checked against KL computed directly from π.
func klTol(d float64) float64 { return 1e-9*d + 1e-13 }

func TestMentoredKLEqualsBudget(t *testing.T) {
	rng := sim.NewRand(1, sim.StreamID("lossy/mentored-kl"))
	worst, worstB, cases, outright := 0.0, 0.0, 0, 0
	for trial := range 400 {
		v := 2 + rng.IntN(49)
		p, q := randPair(rng, v, trial%4)
		kl0 := sim.KL(p, q)
		for _, f := range []float64{1e-4, 0.01, 0.1, 0.5, 0.9, 0.999, 1.5} {
			d := f * kl0
			if math.IsInf(kl0, 1) {
				d = f
			}
			for _, bisect := range []bool{false, true} {
				rule := Mentored{D: d, Bisect: bisect}
				gpi, gacc, err := PositionLaw(rule, p, q) // the law Accept samples
				if err != nil {
					t.Fatal(err)
				}
				if d >= kl0 {
					outright++
					if math.Abs(gacc-1) > 1e-12 || sim.TV(gpi, q) > 1e-12 {
						t.Fatalf("trial %d: D = %g >= KL(p||q) = %g but π != q (acceptance %g)", trial, d, kl0, gacc)
					}
					continue
				}
				sol := rule.solve(sim.F64(p), sim.F64(q))
				if bisect && !sol.Converged {
					continue // counted in TestMentoredSolversAgree
				}
				pi, acc := sol.Pi(p, q)
				cases++
				got := sim.KL(p, pi)
				err2 := math.Abs(got-d) / d
				if bisect {
					worstB = math.Max(worstB, err2)
				} else {
					worst = math.Max(worst, err2)
				}
				if math.Abs(got-d) > klTol(d) || math.Abs(sol.KL-d) > klTol(d) {
					t.Fatalf("trial %d (V=%d, kind %d, bisect %v): KL(p||π) = %.15g, solver %.15g, D = %.15g (rel err %.2g)", trial, v, trial%4, bisect, got, sol.KL, d, err2)
				}
				if math.Abs(gacc-acc) > 1e-12 || sim.TV(gpi, pi) > 1e-12 {
					t.Fatalf("trial %d: sampled law differs from the closed form: acceptance %.16g vs %.16g, TV %.3g", trial, gacc, acc, sim.TV(gpi, pi))
				}
				if !(sol.A <= 1 && sol.B >= 1) {
					t.Fatalf("trial %d: thresholds a = %g, b = %g not a <= 1 <= b", trial, sol.A, sol.B)
				}
			}
		}
	}
	t.Logf("%d solved cases, %d outright; worst relative |KL(p||π) - D|/D: exact %.3g, bisection %.3g", cases, outright, worst, worstB)
}

func TestMentoredSolversAgree(t *testing.T) {
	rng := sim.NewRand(2, sim.StreamID("lossy/mentored-agree"))
	worstA, worstR := 0.0, 0.0
	unconverged := 0
	for trial := range 300 {
		v := 2 + rng.IntN(49)
		p, q := randPair(rng, v, trial%4)
		kl0 := sim.KL(p, q)
		d := rng.Float64() * math.Min(kl0, 2)
		e, err := SolveMentored(p, q, d)
		if err != nil {
			t.Fatal(err)
		}
		b, err := SolveMentoredBisect(p, q, d, 1e-12)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Converged {
			unconverged++
			if math.Abs(e.Acceptance-b.Acceptance) > 1e-9 {
				t.Fatalf("trial %d: unconverged bisection acceptance %.16g, exact %.16g", trial, b.Acceptance, e.Acceptance)
			}
			continue
		}
		worstA = math.Max(worstA, math.Abs(e.A-b.A))
		worstR = math.Max(worstR, math.Abs(e.Acceptance-b.Acceptance))
		// Acceptance is Lipschitz in KL along the frontier with slope
		// 1/|a - b| ≤ ... ; at a relative KL tolerance of 1e-12 both land
		// within 1e-9 in acceptance on these pairs.
		if math.Abs(e.Acceptance-b.Acceptance) > 1e-9 || math.Abs(e.KL-b.KL) > 1e-11*d+1e-14 {
			t.Fatalf("trial %d (V=%d): exact a=%.15g b=%.15g R=%.15g KL=%.15g; bisect a=%.15g b=%.15g R=%.15g KL=%.15g",
				trial, v, e.A, e.B, e.Acceptance, e.KL, b.A, b.B, b.Acceptance, b.KL)
		}
	}
	t.Logf("worst |a_exact - a_bisect| = %.3g, |R_exact - R_bisect| = %.3g; %d of 300 bisections stopped at a one-ulp bracket", worstA, worstR, unconverged)
	if unconverged > 15 {
		t.Fatalf("%d of 300 bisections did not converge", unconverged)
	}
}

// TestMentoredHandExample checks a pair whose solution is known in closed
// form: p = (1/2, 1/2), q = (3/4, 1/4). ρ = (2/3, 2); with a ∈ [2/3, 1]
// nothing is below a except token 0: m = 3/4 - 1/(2a), b = (1/2)/(m + 1/4),
// KL = ½ log a + ½ log b. At a = 0.8: m = 0.125, b = 4/3,
// KL = ½ log(0.8·4/3) = ½ log(16/15).
func TestMentoredHandExample(t *testing.T) {
	p, q := []float64{0.5, 0.5}, []float64{0.75, 0.25}
	d := 0.5 * math.Log(16.0/15)
	s, err := SolveMentored(p, q, d)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.A-0.8) > 1e-14 || math.Abs(s.B-4.0/3) > 1e-14 || math.Abs(s.Acceptance-0.875) > 1e-14 {
		t.Fatalf("got a = %.16g b = %.16g R = %.16g; want 0.8, 4/3, 0.875", s.A, s.B, s.Acceptance)
	}
	pi, _ := s.Pi(p, q)
	// π = (p0/a, p1/b) = (0.625, 0.375).
	if math.Abs(pi[0]-0.625) > 1e-15 || math.Abs(pi[1]-0.375) > 1e-15 {
		t.Fatalf("π = %v, want (0.625, 0.375)", pi)
	}
}

func TestLenienceCap(t *testing.T) {
	rng := sim.NewRand(3, sim.StreamID("lossy/lenience-cap"))
	worst := math.Inf(-1)
	for trial := range 500 {
		v := 2 + rng.IntN(49)
		p, q := randPair(rng, v, trial%4)
		l := []float64{1, 0.9, 0.5, 0.3, 0.1, 0.01, rng.Float64()}[trial%7]
		if l == 0 {
			continue
		}
		want := 0.0 // α_l = Σ min(p/l, q), Leviathan App. A.5
		for i := range p {
			want += math.Min(p[i]/l, q[i])
		}
		for _, resP := range []bool{false, true} {
			pi, acc, err := PositionLaw(Lenience{L: l, ResidualP: resP}, p, q)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(acc-want) > 1e-13 {
				t.Fatalf("trial %d: acceptance %.16g, α_l = %.16g", trial, acc, want)
			}
			for x := range pi {
				worst = math.Max(worst, pi[x]-p[x]/l)
				if pi[x] > p[x]/l+1e-12 {
					t.Fatalf("trial %d (l = %g, residual-p %v): π(%d) = %.16g > p/l = %.16g", trial, l, resP, x, pi[x], p[x]/l)
				}
			}
		}
	}
	t.Logf("max over all π(x) - p(x)/l = %.3g", worst)
}

// TestMentoredBeatsLenience checks the seed's problem (8): at equal
// acceptance (mentored with a = l has lenience's acceptance Σ min(q, p/l))
// mentored decoding's KL(p‖π) is never above either lenience reading's,
// and strictly below where its law differs from theirs.
func TestMentoredBeatsLenience(t *testing.T) {
	rng := sim.NewRand(4, sim.StreamID("lossy/mentored-vs-lenience"))
	strict := 0
	for trial := range 400 {
		v := 2 + rng.IntN(49)
		p, q := randPair(rng, v, trial%2) // KL(p‖π) finite needs π > 0 where p > 0
		l := 0.05 + 0.95*rng.Float64()
		m, err := MentoredAtThreshold(p, q, l)
		if err != nil {
			t.Fatal(err)
		}
		mpi, macc := m.Pi(p, q)
		for _, resP := range []bool{false, true} {
			lpi, lacc, _ := PositionLaw(Lenience{L: l, ResidualP: resP}, p, q)
			if math.Abs(lacc-macc) > 1e-12 {
				t.Fatalf("trial %d: acceptances differ: lenience %.16g mentored %.16g", trial, lacc, macc)
			}
			lkl, mkl := sim.KL(p, lpi), sim.KL(p, mpi)
			if mkl > lkl+1e-13 {
				t.Fatalf("trial %d (l = %g, residual-p %v): mentored KL %.16g above lenience %.16g", trial, l, resP, mkl, lkl)
			}
			if sim.TV(lpi, mpi) > 1e-6 {
				strict++
				if !(mkl < lkl) {
					t.Fatalf("trial %d: laws differ by TV %g but KLs are equal (%.16g)", trial, sim.TV(lpi, mpi), mkl)
				}
			}
		}
	}
	if strict < 100 {
		t.Fatalf("only %d comparisons had different laws; the strictness check is vacuous", strict)
	}
}

// strictRules are the strict settings that must be token verification:
// every registered strict point, and mentored's bisection solver at D = 0.
func strictRules(t *testing.T) map[string]sim.Algorithm {
	t.Helper()
	rules := map[string]sim.Algorithm{"mentored D=0 bisect": Mentored{D: 0, Bisect: true}}
	for _, e := range All() {
		if e.Strict == nil {
			continue
		}
		a, err := e.Build(e.Strict)
		if err != nil {
			t.Fatal(err)
		}
		rules[fmt.Sprint(e.Name, " ", e.Strict)] = a
	}
	for _, name := range []string{"lenience", "lenience-residual-p", "mentored", "cascade-chow", "cascade-diff", "cascade-opt", "fuzzy"} {
		if e, err := Lookup(name); err != nil || e.Strict == nil {
			t.Fatalf("%s: no registered strict point (%v)", name, err)
		}
	}
	return rules
}

// lossyRandBlock draws a block with γ in 1..6, V in 2..50, float64 or float32
// rows, and draft tokens drawn from q.
func lossyRandBlock(rng *rand.Rand) *sim.Block {
	g, v := 1+rng.IntN(6), 2+rng.IntN(49)
	f32 := rng.IntN(2) == 0
	b := &sim.Block{Tokens: make([]int, g), Q: make([]sim.Row, g), P: make([]sim.Row, g+1)}
	for i := 0; i <= g; i++ {
		p, q := randPair(rng, v, rng.IntN(4))
		b.P[i] = testRow(p, f32)
		if i < g {
			b.Q[i] = testRow(q, f32)
			for {
				x := sim.SampleCDF(rng.Float64(), q)
				if b.Q[i].At(x) > 0 {
					b.Tokens[i] = x
					break
				}
			}
		}
	}
	return b
}

func TestStrictSettingsAreTokenBitForBit(t *testing.T) {
	rng := sim.NewRand(5, sim.StreamID("lossy/strict-blocks"))
	blocks := make([]*sim.Block, 400)
	for i := range blocks {
		blocks[i] = lossyRandBlock(rng)
	}
	for name, rule := range strictRules(t) {
		for bi, b := range blocks {
			for rep := range 25 {
				r1 := sim.NewRand(uint64(bi), uint64(rep))
				r2 := sim.NewRand(uint64(bi), uint64(rep))
				want := Token{}.Accept(r1, b)
				got := rule.Accept(r2, b)
				if got != want {
					t.Fatalf("%s, block %d rep %d: outcome %+v, token verification %+v", name, bi, rep, got, want)
				}
				if r1.Uint64() != r2.Uint64() {
					t.Fatalf("%s, block %d rep %d: consumed a different number of uniforms", name, bi, rep)
				}
			}
		}
	}
}

// The same at the law level, through the registry's parameter values.
func TestStrictSettingsLawsAreToken(t *testing.T) {
	rng := sim.NewRand(6, sim.StreamID("lossy/strict-laws"))
	for name, a := range strictRules(t) {
		var want, got sim.Law
		for range 100 {
			b := lossyRandBlock(rng)
			Token{}.Law(b, &want)
			a.(sim.Lawer).Law(b, &got)
			for i := range want.P {
				if math.Abs(want.P[i]-got.P[i]) > 1e-15 {
					t.Fatalf("%s: law entry %d = %g, token %g", name, i, got.P[i], want.P[i])
				}
			}
		}
	}
}

// lossyRules are non-trivial settings of every lossy rule.
func lossyRules() map[string]sim.Algorithm {
	return map[string]sim.Algorithm{
		"lenience l=0.4":            Lenience{L: 0.4},
		"lenience-residual-p l=0.4": Lenience{L: 0.4, ResidualP: true},
		"mentored D=0.05":           Mentored{D: 0.05},
		"mentored D=0.05 bisect":    Mentored{D: 0.05, Bisect: true},
		"typical default":           Typical{Eps: 0.09, Delta: 0.3},
		"typical eps=0.3":           Typical{Eps: 0.3, Delta: 0.6},
		"cascade-chow alpha=0.4":    Cascade{Rule: Chow, Alpha: 0.4},
		"cascade-diff alpha=0":      Cascade{Rule: Diff, Alpha: 0},
		"cascade-opt alpha=0.2":     Cascade{Rule: OPT, Alpha: 0.2},
		"fuzzy T=0.05":              Fuzzy{T: 0.05},
	}
}

// TestPositionLawMatchesExact checks PositionLaw against the exact engine
// (γ = 1, L = 1: ExactResult.First is π).
func TestPositionLawMatchesExact(t *testing.T) {
	rng := sim.NewRand(7, sim.StreamID("lossy/position-law"))
	for trial := range 60 {
		v := 2 + rng.IntN(7)
		p, q := randPair(rng, v, trial%4)
		for name, rule := range lossyRules() {
			pi, acc, err := PositionLaw(rule, p, q)
			if err != nil {
				t.Fatal(err)
			}
			res := mustExact(t, sim.Pair{P: sim.Fixed(p), Q: sim.Fixed(q)}, rule.(sim.Lawer), sim.ExactConfig{Gamma: 1, L: 1})
			if math.Abs(res.ExpectedAccepted-acc) > 1e-13 {
				t.Fatalf("%s: acceptance %.16g, exact %.16g", name, acc, res.ExpectedAccepted)
			}
			for x := range pi {
				if math.Abs(pi[x]-res.First[x]) > 1e-13 {
					t.Fatalf("%s trial %d: π = %v, exact First = %v", name, trial, pi, res.First)
				}
			}
		}
	}
}

// TestSamplingMatchesLaw runs each rule's Accept many times on fixed
// blocks and tests the (Accepted, Next) counts against its Law with a
// chi-squared test (Cochran pooling), at level lawLevel per rule and
// block; the test fails only if p < lawLevel.
func TestSamplingMatchesLaw(t *testing.T) {
	const n, lawLevel = 40000, 1e-6
	rng := sim.NewRand(8, sim.StreamID("lossy/sampling-blocks"))
	var blocks []*sim.Block
	for len(blocks) < 4 {
		b := lossyRandBlock(rng)
		if b.V() <= 12 {
			blocks = append(blocks, b)
		}
	}
	for name, rule := range lossyRules() {
		for bi, b := range blocks {
			var law sim.Law
			rule.(sim.Lawer).Law(b, &law)
			sim.Normalize(law.P) // float32 rows sum to 1 only within ~1e-7
			r := sim.NewRand(9, sim.StreamID("lossy/sampling/"+name, uint64(bi)))
			res := blockFit(t, r, rule, b, &law, n)
			if res.PValue < lawLevel {
				t.Fatalf("%s block %d: chi-squared %.1f on %d df, p = %.3g", name, bi, res.Stat, res.DF, res.PValue)
			}
		}
	}
}

// TestSamplingDetectsWrongLaw is the negative control of the test above:
// lenience's two readings differ only in the residual, and the chi-squared
// test must tell them apart on a block where the residuals differ.
func TestSamplingDetectsWrongLaw(t *testing.T) {
	b := &sim.Block{Tokens: []int{0}, Q: []sim.Row{sim.F64([]float64{0.7, 0.2, 0.1})},
		P: []sim.Row{sim.F64([]float64{0.2, 0.3, 0.5}), sim.F64([]float64{1.0 / 3, 1.0 / 3, 1.0 / 3})}}
	var law sim.Law
	Lenience{L: 0.5}.Law(b, &law)
	r := sim.NewRand(10, sim.StreamID("lossy/negative-control"))
	res := blockFit(t, r, Lenience{L: 0.5, ResidualP: true}, b, &law, 40000)
	if res.PValue > 1e-6 {
		t.Fatalf("the other residual reading was not detected: p = %g", res.PValue)
	}
}

func TestLossyParamErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		ps    Params
		field string
	}{
		{"lenience", Params{"l": 0}, "l"},
		{"lenience", Params{"l": 1.5}, "l"},
		{"lenience", Params{"l": -0.5}, "l"},
		{"lenience", Params{"l": math.NaN()}, "l"},
		{"lenience-residual-p", Params{"l": 0}, "l"},
		{"mentored", Params{"D": -0.1}, "D"},
		{"mentored", Params{"D": math.Inf(1)}, "D"},
		{"typical", Params{"eps": -0.01}, "eps"},
		{"typical", Params{"eps": 1.5}, "eps"},
		{"typical", Params{"delta": -1}, "delta"},
		{"cascade-chow", Params{"alpha": -0.1}, "alpha"},
		{"cascade-diff", Params{"alpha": -1.5}, "alpha"},
		{"cascade-opt", Params{"alpha": 2}, "alpha"},
		{"fuzzy", Params{"T": -1}, "T"},
		{"mentored", Params{"l": 0.5}, "l"},
	} {
		_, err := New(c.name, c.ps)
		if err == nil {
			t.Fatalf("%s %v: no error", c.name, c.ps)
		}
		if !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.name) {
			t.Fatalf("%s %v: error %q does not name the rule and field", c.name, c.ps, err)
		}
	}
	if _, err := SolveMentored([]float64{0.5, 0.5}, []float64{0.5, 0.5}, -1); err == nil {
		t.Fatal("SolveMentored accepted D = -1")
	}
	if _, err := MentoredAtThreshold([]float64{0.5, 0.5}, []float64{0.9, 0.1}, 0); err == nil {
		t.Fatal("MentoredAtThreshold accepted a = 0")
	}
	for _, name := range []string{"lenience", "lenience-residual-p", "mentored", "typical", "cascade-chow", "cascade-diff", "cascade-opt", "fuzzy"} {
		e, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Lossy || e.Mutant || e.Greedy {
			t.Fatalf("%s: Info %+v; want Lossy only", name, e.Info)
		}
		a, err := e.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !HasLaw(a) {
			t.Fatalf("%s has no law", name)
		}
	}
}

func TestLossyAcceptDoesNotAllocate(t *testing.T) {
	rng := sim.NewRand(11, sim.StreamID("lossy/allocs"))
	b := lossyRandBlock(rng)
	for name, rule := range lossyRules() {
		r := sim.NewRand(1, 2)
		rule.Accept(r, b)
		if n := testing.AllocsPerRun(200, func() { rule.Accept(r, b) }); n > 0.05 {
			t.Errorf("%s: %.2f allocations per Accept", name, n)
		}
	}
}
