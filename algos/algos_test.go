package algos_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/stattest"
)

// randomPairs returns n seeded Markov pairs with V ≤ 6, orders 1 and 2 and
// mixed draft quality, each with a γ small enough to enumerate.
func randomPairs(t *testing.T, n int) ([]sim.Pair, []int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(20, 21))
	var pairs []sim.Pair
	var gammas []int
	for i := 0; i < n; i++ {
		v := 2 + rng.IntN(5)
		c := sim.MarkovConfig{V: v, Order: 1 + i%2, A: 0.2 + rng.Float64(), Quality: rng.Float64()}
		pr, err := sim.NewMarkovPair(rng, c)
		if err != nil {
			t.Fatal(err)
		}
		g := 1 + rng.IntN(4)
		for pow(v, g+1) > 1<<14 {
			g--
		}
		pairs = append(pairs, pr)
		gammas = append(gammas, g)
	}
	return pairs, gammas
}

func pow(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

// TestExactLossless: every lossless single-chain rule (and every lossy
// rule's strict point, which the lossy tests cover) has max |π - p| below
// sim.ExactTol on 24 random context-dependent pairs, and every mutant with
// a law is flagged on at least one of them.
func TestExactLossless(t *testing.T) {
	t.Parallel()
	pairs, gammas := randomPairs(t, 24)
	for _, e := range algos.All() {
		a, err := e.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		lw, ok := a.(sim.Lawer)
		if !ok || e.Lossy {
			continue
		}
		worst := 0.0
		for i, pr := range pairs {
			r, err := sim.Exact(pr, lw, sim.ExactConfig{Gamma: gammas[i], Greedy: e.Greedy})
			if err != nil {
				t.Fatalf("%s on %s: %v", e.Name, pr.Name, err)
			}
			worst = math.Max(worst, r.MaxAbsError)
			if !e.Mutant && !r.Lossless {
				t.Errorf("%s is not lossless on %s (γ=%d): max |π-p| = %.3g", e.Name, pr.Name, gammas[i], r.MaxAbsError)
			}
		}
		if e.Mutant && worst < 1e-6 {
			t.Errorf("mutant %s is not flagged by the exact engine on any of %d pairs (worst error %.3g)", e.Name, len(pairs), worst)
		}
	}
}

// TestSeedExample: the example of Leviathan's post "Fixing a 'Bug' in Speculative Decoding" (2024), p = (1/3, 2/3), q = (2/3, 1/3),
// γ = 2: token verification accepts α + α² = 2/3 + 4/9 = 10/9 draft tokens
// per step and emits 19/9 (Leviathan Eq. 1 with α = 2/3, as the pair is
// context-free).
func TestSeedExample(t *testing.T) {
	t.Parallel()
	pr := sim.Pair{P: sim.Fixed{1.0 / 3, 2.0 / 3}, Q: sim.Fixed{2.0 / 3, 1.0 / 3}}
	r, err := sim.Exact(pr, algos.Token{}, sim.ExactConfig{Gamma: 2})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.ExpectedAccepted-10.0/9) > 1e-15 || math.Abs(r.ExpectedEmitted-19.0/9) > 1e-15 || !r.Lossless {
		t.Errorf("E[accepted] = %.17g (want 10/9), E[emitted] = %.17g (want 19/9), lossless %v", r.ExpectedAccepted, r.ExpectedEmitted, r.Lossless)
	}
	// The first emitted token's law is p's (Marginal of the leaves).
	if math.Abs(r.First[0]-1.0/3) > 1e-15 || math.Abs(r.First[1]-2.0/3) > 1e-15 {
		t.Errorf("first-token law = %v, want [1/3 2/3]", r.First)
	}
}

// randBlock draws a block over V tokens with γ positions; some target rows
// have zeros so residual edge cases occur.
func randBlock(rng *rand.Rand, v, g int) *sim.Block {
	row := func(zeros bool) []float64 {
		p := make([]float64, v)
		for i := range p {
			p[i] = rng.ExpFloat64()
			if zeros && rng.IntN(3) == 0 {
				p[i] = 0
			}
		}
		p[rng.IntN(v)] += 0.1
		sim.Normalize(p)
		return p
	}
	b := &sim.Block{}
	for i := 0; i < g; i++ {
		q := row(false)
		b.Q = append(b.Q, sim.F64(q))
		b.Tokens = append(b.Tokens, sim.SampleCDF(rng.Float64(), q))
	}
	for i := 0; i <= g; i++ {
		b.P = append(b.P, sim.F64(row(i%2 == 1)))
	}
	return b
}

// TestSamplingMatchesLaw: for every rule with a law, the sampled (Accepted,
// Next) frequencies on fixed blocks pass a chi-squared test against the
// law at level 1e-6 (fixed seeds, so the outcome is deterministic), and a
// negative control (token's samples against exact-match's law) fails it.
func TestSamplingMatchesLaw(t *testing.T) {
	t.Parallel()
	const n = 40000
	rng := rand.New(rand.NewPCG(7, 8))
	blocks := []*sim.Block{randBlock(rng, 4, 2), randBlock(rng, 6, 3)}
	sample := func(a sim.Algorithm, b *sim.Block) []int64 {
		counts := make([]int64, (b.Gamma()+1)*(b.V()+1))
		r := rand.New(rand.NewPCG(9, 10))
		for range n {
			o := a.Accept(r, b)
			counts[o.Accepted*(b.V()+1)+o.Next+1]++
		}
		return counts
	}
	var law sim.Law
	for _, e := range algos.All() {
		a, err := e.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		lw, ok := a.(sim.Lawer)
		if !ok {
			continue
		}
		for bi, b := range blocks {
			lw.Law(b, &law)
			res, err := stattest.ChiSquare(sample(a, b), law.P, 0)
			if err != nil {
				t.Fatal(err)
			}
			if res.PValue < 1e-6 {
				t.Errorf("%s block %d: sampling disagrees with the law (X2 = %.1f, df %d, p = %.3g)", e.Name, bi, res.Stat, res.DF, res.PValue)
			}
		}
	}
	algos.ExactMatch{}.Law(blocks[1], &law)
	if res, _ := stattest.ChiSquare(sample(algos.Token{}, blocks[1]), law.P, 0); res.PValue > 1e-6 {
		t.Errorf("negative control passed: token's samples fit exact-match's law (p = %.3g)", res.PValue)
	}
}

// zeroSource makes every Float64 exactly 0.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// TestZeroCoin: with a coin of exactly 0, the inclusive comparison of the
// zero-coin mutant accepts a draft token whose target probability is 0;
// token verification never does. The edge check flags only the mutant.
func TestZeroCoin(t *testing.T) {
	t.Parallel()
	b := &sim.Block{Tokens: []int{0}, Q: []sim.Row{sim.F64([]float64{0.5, 0.5})},
		P: []sim.Row{sim.F64([]float64{0, 1}), sim.F64([]float64{0.5, 0.5})}}
	if o := (algos.ZeroCoin{}).Accept(rand.New(zeroSource{}), b); o.Accepted != 1 {
		t.Errorf("zero-coin mutant with coin 0: accepted %d, want 1 (the planted bug)", o.Accepted)
	}
	if o := (algos.Token{}).Accept(rand.New(zeroSource{}), b); o.Accepted != 0 || o.Next != 1 {
		t.Errorf("token with coin 0: %+v, want the p = 0 token rejected and 1 emitted", o)
	}
	for _, e := range algos.All() {
		a, _ := e.Build(nil)
		err := check.EdgeCheck(a)
		if e.Mutant && e.Name == "mutant-zero-coin" && err == nil {
			t.Error("EdgeCheck missed the zero-coin mutant")
		}
		if !e.Mutant && !e.Lossy && err != nil {
			t.Errorf("EdgeCheck flags the lossless rule %s: %v", e.Name, err)
		}
	}
}

// TestNoAllocs: every rule registered AllocFree (token and block
// verification among them) does not allocate per step on float32 rows.
func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	b := randBlock(rng, 300, 4)
	for i := range b.P {
		b.P[i] = sim.F32(f32(b.P[i]))
	}
	for i := range b.Q {
		b.Q[i] = sim.F32(f32(b.Q[i]))
	}
	checked := map[string]bool{}
	for _, e := range algos.All() {
		if !e.AllocFree {
			continue
		}
		a, err := e.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(200, func() { a.Accept(rng, b) }); n != 0 {
			t.Errorf("%s allocates %.1f times per step", e.Name, n)
		}
		checked[e.Name] = true
	}
	for _, name := range []string{"token", "token-nobonus", "greedy", "exact-match", "block"} {
		if !checked[name] {
			t.Errorf("%s is not registered AllocFree", name)
		}
	}
}

func f32(r sim.Row) []float32 {
	out := make([]float32, r.Len())
	for i := range out {
		out[i] = float32(r.At(i))
	}
	return out
}

func TestRegistryErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ps   algos.Params
	}{
		{"nope", nil},
		{"token", algos.Params{"x": 1}},
		{"mutant-q-mismatch", algos.Params{"T": 0}},
		{"mutant-q-mismatch", algos.Params{"T": math.NaN()}},
	} {
		if _, err := algos.New(c.name, c.ps); err == nil {
			t.Errorf("New(%s, %v) accepted bad input", c.name, c.ps)
		}
	}
}

func ExampleToken() {
	pr := sim.Pair{P: sim.Fixed{1.0 / 3, 2.0 / 3}, Q: sim.Fixed{2.0 / 3, 1.0 / 3}}
	r, _ := sim.Exact(pr, algos.Token{}, sim.ExactConfig{Gamma: 2})
	fmt.Printf("E[accepted] = %.6f, E[emitted] = %.6f, lossless = %v\n", r.ExpectedAccepted, r.ExpectedEmitted, r.Lossless)
	b := &sim.Block{Tokens: []int{0, 0}, Q: []sim.Row{sim.F64(pr.Q.(sim.Fixed)), sim.F64(pr.Q.(sim.Fixed))},
		P: []sim.Row{sim.F64(pr.P.(sim.Fixed)), sim.F64(pr.P.(sim.Fixed)), sim.F64(pr.P.(sim.Fixed))}}
	o := algos.Token{}.Accept(rand.New(rand.NewPCG(1, 2)), b)
	fmt.Printf("accepted %d, next %d\n", o.Accepted, o.Next)
	// Output:
	// E[accepted] = 1.111111, E[emitted] = 2.111111, lossless = true
	// accepted 0, next 1
}
