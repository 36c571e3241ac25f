package smc

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/specsim/specsim/internal/longtest"
	"github.com/specsim/specsim/sim"
)

var long = flag.Bool("long", false, "run the ≥10^5-run unbiasedness check of every scheme on three models (minutes)")

// deltaPerAssertion is the false-alarm probability allowed to each
// statistical assertion of the default suite (seeds are fixed, so the
// outcomes are deterministic; δ says how surprising a failure would be
// under the null).
const deltaPerAssertion = 1e-4

var testModels = StandardModels()

func buildTest(t testing.TB, tm ModelSpec) (*Model, *Exact) {
	t.Helper()
	m, err := tm.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Enumerate(m)
	if err != nil {
		t.Fatal(err)
	}
	return m, ex
}

func scheme(t testing.TB, name string) Scheme {
	t.Helper()
	s, err := LookupScheme(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEnumerateHand: hand-computed Z for a context-free model
// p = (0.5, 0.3, 0.2), EOS = 0, T = 2, forbidding token 2: the finished
// strings are "0" (0.5), "1 0" (0.3·0.5), "1 1" (0.3·0.3, cut at T);
// Z = 0.74, and 0.65 once "ends within T" removes "1 1".
func TestEnumerateHand(t *testing.T) {
	for _, c := range []struct {
		pots  []Potential
		z     float64
		nPost int
	}{
		{nil, 1, 7},
		{[]Potential{Forbid{S: []int{2}}}, 0.74, 3},
		{[]Potential{Forbid{S: []int{2}}, EndWithin{}}, 0.65, 2},
		{[]Potential{Length{Min: 1, Max: 1}}, 0.3*0.5 + 0.2*0.5, 2},
		{[]Potential{Keyword{Tok: 2}}, 0.3*0.2 + 0.2*0.5 + 0.2*0.3 + 0.2*0.2, 4}, // 1 2, 2 0, 2 1, 2 2
	} {
		m := &Model{LM: sim.Fixed{0.5, 0.3, 0.2}, EOS: 0, T: 2, Potentials: c.pots}
		ex, err := Enumerate(m)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(ex.Z-c.z) > 1e-15 || len(ex.Post) != c.nPost {
			t.Errorf("%v: Z = %.17g with %d strings, want %.17g with %d", m, ex.Z, len(ex.Post), c.z, c.nPost)
		}
	}
}

// TestEnumerateIdentities: posteriors and filtering posteriors sum to 1,
// Z_T = Z, P_T = P, and the Z_t never increase for potentials in [0, 1].
func TestEnumerateIdentities(t *testing.T) {
	for _, tm := range testModels {
		_, ex := buildTest(t, tm)
		sum := 0.0
		for _, s := range ex.Post {
			sum += s.P
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: Σ P = %.17g", tm.Name, sum)
		}
		for i, f := range ex.Filter {
			s := 0.0
			for _, x := range f {
				s += x.P
			}
			if math.Abs(s-1) > 1e-12 {
				t.Errorf("%s: Σ P_%d = %.17g", tm.Name, i+1, s)
			}
		}
		if ex.Zt[len(ex.Zt)-1] != ex.Z || len(ex.Filter[len(ex.Filter)-1]) != len(ex.Post) {
			t.Errorf("%s: the last filtering posterior is not the posterior", tm.Name)
		}
	}
}

// bruteCStar tries every split (the j largest positive weights
// deterministic) and returns the c of the one that is consistent:
// c·ŵ < 1 on the stochastic side, ≥ 1 on the deterministic side, and
// Σ min(1, c·ŵ) = n.
func bruteCStar(w []float64, n int) (float64, int) {
	total := 0.0
	for _, x := range w {
		total += x
	}
	var pos []float64
	for _, x := range w {
		if x > 0 {
			pos = append(pos, x/total)
		}
	}
	m := len(pos)
	if m <= n {
		return math.Inf(1), 0
	}
	found, c := 0, 0.0
	for j := 0; j < n; j++ { // j deterministic, n - j slots for the rest
		thr := largest(pos, j)
		S := 0.0
		for _, x := range pos {
			if x < thr {
				S += x
			}
		}
		cnt := 0
		for _, x := range pos {
			if x >= thr {
				cnt++
			}
		}
		if cnt != j {
			continue // ties straddle the split
		}
		cc := float64(n-j) / S
		ok := true
		for _, x := range pos {
			if (x >= thr) != (cc*x >= 1*(1-1e-12)) {
				ok = false
			}
		}
		if ok {
			found++
			c = cc
		}
	}
	return c, found
}

// largest returns the j-th largest value (+Inf for j = 0).
func largest(xs []float64, j int) float64 {
	if j == 0 {
		return math.Inf(1)
	}
	ys := append([]float64(nil), xs...)
	for i := 0; i < j; i++ {
		k := i
		for l := i + 1; l < len(ys); l++ {
			if ys[l] > ys[k] {
				k = l
			}
		}
		ys[i], ys[k] = ys[k], ys[i]
	}
	return ys[j-1]
}

// TestCStarBruteForce: on 3000 random weight vectors (Dirichlet-like,
// heavy-tailed, with zeros and ties) CStar equals the unique consistent
// split found by brute force, satisfies f(c*) = n, and is the infimum of
// {f > n}: f(c*·(1+ε)) > n ≥ f(c*·(1−ε)).
func TestCStarBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var order []int
	for trial := range 3000 {
		L := 2 + rng.IntN(30)
		n := 1 + rng.IntN(L)
		w := make([]float64, L)
		for i := range w {
			switch rng.IntN(6) {
			case 0:
				w[i] = 0
			case 1:
				w[i] = 0.25 // ties
			default:
				w[i] = math.Exp(3 * rng.NormFloat64())
			}
		}
		if trial == 0 {
			w = []float64{1, 1, 1, 1} // all tied: c* = +Inf for n = 4, 3 for n = 3
			n = 3
		}
		total := 0.0
		for _, x := range w {
			total += x
		}
		if total == 0 {
			continue
		}
		c, kstar, m, ord := CStar(w, n, order)
		order = ord
		bc, found := bruteCStar(w, n)
		if math.IsInf(bc, 1) {
			if !math.IsInf(c, 1) {
				t.Fatalf("w = %v, n = %d: c* = %g, want +Inf (%d positive)", w, n, c, m)
			}
			continue
		}
		if found != 1 {
			t.Fatalf("w = %v, n = %d: brute force found %d consistent splits", w, n, found)
		}
		if math.Abs(c-bc) > 1e-12*bc {
			t.Fatalf("w = %v, n = %d: c* = %.17g, brute force %.17g", w, n, c, bc)
		}
		if f := F(w, total, c); math.Abs(f-float64(n)) > 1e-9*float64(n) {
			t.Fatalf("w = %v, n = %d: f(c*) = %.17g", w, n, f)
		}
		if F(w, total, c*(1+1e-9)) <= float64(n) || F(w, total, c*(1-1e-9)) > float64(n) {
			t.Fatalf("w = %v, n = %d: c* = %g is not inf{c : f(c) > n}", w, n, c)
		}
		if det := m - kstar; det > n {
			t.Fatalf("w = %v, n = %d: %d deterministic", w, n, det)
		}
		cb, _ := CStarBisect(w, n, 1e-13, order)
		if math.Abs(cb-c) > 1e-11*c {
			t.Fatalf("w = %v, n = %d: bisection %.17g vs c* %.17g", w, n, cb, c)
		}
	}
}

// TestCStarFindFirst pins the LLaMPPL find_c rule one split past the
// consistent one. For ŵ = (1, 2, 3, 10)/16 and n = 2, g(k) = B_k/ŵ_(k) +
// m − k is 4, 3.5, 3, 1.6: the consistent split is k* = 3 (the three small
// weights stochastic), c* = (2 − 4 + 3)/(6/16) = 16/6 and f(c*) = 1 + 1 = 2.
// find_c stops at the first g ≤ 2 (k = 4) and returns (2 − 0)/1 = 2, where
// f(2) = 12/16 + 1 = 1.75 < n: the deterministic child is kept and the
// stochastic ones get the weight W/2 > W/c*.
func TestCStarFindFirst(t *testing.T) {
	w := []float64{1, 2, 3, 10}
	c, _, _, _ := CStar(w, 2, nil)
	cf, _ := CStarFindFirst(w, 2, nil)
	if math.Abs(F(w, 16, c)-2) > 1e-12 {
		t.Errorf("f(c*) = %g, want 2", F(w, 16, c))
	}
	if c != 16.0/6 {
		t.Errorf("c* = %.17g, want 16/6 (ŵ = (1,2,3)/16 stochastic, 10/16 deterministic)", c)
	}
	if cf != 2 || F(w, 16, cf) >= 2 {
		t.Errorf("find_c = %g with f = %g; want 2 with f = 1.75 < n", cf, F(w, 16, cf))
	}
}

// scripted is a rand.Source whose Float64 is exactly u.
type scripted struct{ u float64 }

func (s *scripted) Uint64() uint64 { return uint64(s.u * (1 << 53)) } // rand.Float64 reads the low 53 bits

// TestResampleExpectationExact: for random weight vectors the expected
// total weight after one fc resampling step equals the total before. The
// step's only randomness is U = α·u; the selection is a step function of
// u, so the mean over the M midpoints u = (j+½)/M is exact for fc, whose
// selection count is N − |I_det| for every u (asserted). The same
// enumeration shows the transcription's α and the missing reset biased,
// the bisection variant within its tolerance, and systematic resampling
// exact.
func TestResampleExpectationExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ws := &workspace{}
	var sel selection
	const M = 1000
	src := &scripted{}
	u := rand.New(src)
	flagged := map[string]int{}
	for trial := range 100 {
		L := 4 + rng.IntN(20)
		n := 2 + rng.IntN(L-2)
		w := make([]float64, L)
		before := 0.0
		for i := range w {
			w[i] = math.Exp(2 * rng.NormFloat64())
			if rng.IntN(8) == 0 {
				w[i] = 0
			}
			before += w[i]
		}
		if before == 0 {
			continue
		}
		mean := func(f func()) (float64, int, int) {
			s, lo, hi := 0.0, math.MaxInt, 0
			for j := range M {
				src.u = (float64(j) + 0.5) / M
				f()
				for _, x := range sel.w {
					s += x
				}
				lo, hi = min(lo, len(sel.idx)), max(hi, len(sel.idx))
			}
			return s / M, lo, hi
		}
		got, lo, hi := mean(func() { resampleFC(u, w, n, fcExact, 0, false, ws, &sel) })
		if math.Abs(got-before) > 1e-9*before {
			t.Fatalf("trial %d: fc: E[Σ after] = %.15g, Σ before = %.15g", trial, got, before)
		}
		if lo != n || hi != n {
			t.Fatalf("trial %d: fc kept %d..%d particles, want %d", trial, lo, hi, n)
		}
		got, _, _ = mean(func() { resampleFC(u, w, n, fcBisect, 1e-3, false, ws, &sel) })
		if r := got/before - 1; r < -1e-9 || r > 1.1e-3 {
			t.Fatalf("trial %d: fc-bisect (tol 1e-3): relative bias %.3g outside [0, tol]", trial, r)
		}
		got, _, _ = mean(func() { resampleSystematic(u, w, n, false, ws, &sel) })
		if math.Abs(got-before) > 1e-9*before {
			t.Fatalf("trial %d: systematic: E[Σ after] = %.15g, Σ before = %.15g", trial, got, before)
		}
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"alpha-idet", func() { resampleFC(u, w, n, fcTranscript, 0, false, ws, &sel) }},
			{"no-reset", func() { resampleFC(u, w, n, fcExact, 0, true, ws, &sel) }},
			{"findc-first", func() { resampleFC(u, w, n, fcFindFirst, 0, false, ws, &sel) }},
		} {
			if got, _, _ := mean(c.f); math.Abs(got-before) > 1e-6*before {
				flagged[c.name]++
			}
		}
	}
	for _, name := range []string{"alpha-idet", "no-reset", "findc-first"} {
		if flagged[name] < 10 {
			t.Errorf("mutant %s broke E[Σ after] = Σ before on only %d of 100 vectors", name, flagged[name])
		}
		t.Logf("mutant %s: E[Σ after] ≠ Σ before on %d of 100 vectors", name, flagged[name])
	}
}

// correct lists the schemes that must be unbiased, with their K.
var correct = []struct {
	name string
	k    int
}{{"fc", 2}, {"fc", 3}, {"is", 1}, {"multinomial", 2}, {"systematic", 2}, {"stratified", 2}}

// TestZUnbiased: E[Ẑ]/Z = 1 for every correct scheme on three models
// (N = 8, 20000 runs each: |z| must stay below z_{1−δ/2}, δ =
// deltaPerAssertion), and the per-step estimates Ẑ_t of fc are unbiased
// for the exact Z_t. The ≥10^5-run version is TestZUnbiasedLong (-long).
func TestZUnbiased(t *testing.T) {
	testUnbiased(t, 20000, 8)
}

// TestZUnbiasedLong is the acceptance run: 10^5 runs of every
// correct scheme on each model (go test ./smc -run Long -long).
func TestZUnbiasedLong(t *testing.T) {
	if !*long && !longtest.Enabled() {
		t.Skip("needs -long")
	}
	testUnbiased(t, 100000, 16)
}

func testUnbiased(t *testing.T, runs int64, N int) {
	zmax := distuv.UnitNormal.Quantile(1 - deltaPerAssertion/2)
	for _, tm := range testModels {
		m, ex := buildTest(t, tm)
		for _, c := range correct {
			st, err := Evaluate(context.Background(), m, ex, scheme(t, c.name), Config{N: N, K: c.k}, runs, 11, "test/"+tm.Name, sim.MCOptions{})
			if err != nil {
				t.Fatal(err)
			}
			z := (st.ZRatio.Mean - 1) / (st.ZRatio.StdDev / math.Sqrt(float64(st.Runs)))
			t.Logf("%-24s %-12s K=%d: E[Ẑ]/Z = %.5f [%.5f, %.5f], Var/Z² %.4f, TV %.4f, z = %.2f", tm.Name, c.name, c.k, st.ZRatio.Mean, st.ZRatio.Lo, st.ZRatio.Hi, st.ZRatio.StdDev*st.ZRatio.StdDev, st.TV.Mean, z)
			if math.Abs(z) > zmax {
				t.Errorf("%s %s K=%d: E[Ẑ]/Z = %.5f, |z| = %.2f > %.2f", tm.Name, c.name, c.k, st.ZRatio.Mean, math.Abs(z), zmax)
			}
			if j := Judge(st, nil, N, DefaultLevel, DefaultPower); j.Posterior.PValue < deltaPerAssertion {
				t.Errorf("%s %s: particle measure biased: %+v", tm.Name, c.name, j.Posterior)
			}
			if c.name == "fc" && (st.SizeMin != N || st.SizeMax != N) {
				t.Errorf("%s fc: population %d..%d, want %d", tm.Name, st.SizeMin, st.SizeMax, N)
			}
		}
	}
}

// TestZtUnbiased: the running estimate Ẑ_t = (1/N)Σ w_i after iteration
// t of fc is unbiased for Z_t = E_M[Π_{i≤t} G_i] (filtering normaliser).
func TestZtUnbiased(t *testing.T) {
	zmax := distuv.UnitNormal.Quantile(1 - deltaPerAssertion/2)
	m, ex := buildTest(t, testModels[0])
	sp, err := NewSampler(m, scheme(t, "fc"), Config{N: 6, K: 2})
	if err != nil {
		t.Fatal(err)
	}
	const R = 20000
	s, s2 := make([]float64, m.T), make([]float64, m.T)
	for r := range R {
		res := sp.Run(sim.NewRand(5, sim.StreamID("test/zt", uint64(r))))
		for i, z := range res.ZHatT {
			s[i] += z / ex.Zt[i]
			s2[i] += z * z / (ex.Zt[i] * ex.Zt[i])
		}
	}
	for i := range s {
		mean := s[i] / R
		sd := math.Sqrt((s2[i]/R - mean*mean) * R / (R - 1))
		if z := (mean - 1) / (sd / math.Sqrt(R)); math.Abs(z) > zmax {
			t.Errorf("t = %d: E[Ẑ_t]/Z_t = %.5f (z = %.2f)", i+1, mean, z)
		}
	}
}

// TestMutantsFlagged: every planted bug gets the verdict Violated on
// every model (N = 8, K = 2, 10000 runs, level 0.01), while fc passes the
// same judgement, convergence included. LLaMPPL's find_c is flagged where
// weights differ (soft potentials); on the keyword+length model every
// positive weight is equal, find_c then returns c = N = c* and the rule
// is exactly fc, so there it must pass.
func TestMutantsFlagged(t *testing.T) {
	for _, tm := range testModels {
		m, ex := buildTest(t, tm)
		for _, s := range Schemes() {
			if !s.Mutant && s.Name != "fc" {
				continue
			}
			c := Config{N: 8, K: 2}
			st, err := Evaluate(context.Background(), m, ex, s, c, 10000, 13, "test/mutants", sim.MCOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c.N *= ConvergenceFactor
			lg, err := Evaluate(context.Background(), m, ex, s, c, 2500, 13, "test/mutants-large", sim.MCOptions{})
			if err != nil {
				t.Fatal(err)
			}
			j := Judge(st, &lg, 8, DefaultLevel, DefaultPower)
			t.Logf("%-24s %-20s E[Ẑ]/Z %.4f, TV %.4f → %.4f, particles %.2f [%d, %d]: %s %v", tm.Name, s.Name, st.ZRatio.Mean, st.TV.Mean, lg.TV.Mean, st.SizeMean, st.SizeMin, st.SizeMax, j.Verdict, j.Reasons)
			want := NotDetected
			if s.Mutant && !(s.fc == fcFindFirst && tm.Name == "keyword+length+tempered") {
				want = Violated
			}
			if j.Verdict != want {
				t.Errorf("%s %s: verdict %s, want %s (%v)", tm.Name, s.Name, j.Verdict, want, j.Reasons)
			}
		}
	}
}

// TestWorkersDeterministic: Evaluate gives bit-identical Stats for 1 and
// 3 workers.
func TestWorkersDeterministic(t *testing.T) {
	m, ex := buildTest(t, testModels[1])
	var got [2]Stats
	for i, w := range []int{1, 3} {
		st, err := Evaluate(context.Background(), m, ex, scheme(t, "fc"), Config{N: 5, K: 2}, 3000, 9, "test/workers", sim.MCOptions{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = st
	}
	if got[0].ZRatio != got[1].ZRatio || got[0].TV != got[1].TV || got[0].ESS != got[1].ESS {
		t.Errorf("1 worker %+v, 3 workers %+v", got[0].ZRatio, got[1].ZRatio)
	}
}
