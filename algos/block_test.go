package algos

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// ratBlockEmitted computes E[emitted tokens per step] of block
// verification on a context-free pair (the same p, q at every position) in
// exact rational arithmetic, by enumerating the V^γ drafts: for each draft
// it forms w_i, Z_i and h_i (Sun et al., arXiv 2403.10444, Algorithm 2) as fractions and adds
// Pr(draft)·(1 + E[τ]). It shares no code with Block.
func ratBlockEmitted(p, q []*big.Rat, gamma int) *big.Rat {
	v := len(p)
	one := big.NewRat(1, 1)
	total := new(big.Rat)
	draft := make([]int, gamma)
	var walk func(i int, pr *big.Rat)
	walk = func(i int, pr *big.Rat) {
		if i < gamma {
			for x := 0; x < v; x++ {
				draft[i] = x
				walk(i+1, new(big.Rat).Mul(pr, q[x]))
			}
			return
		}
		w := make([]*big.Rat, gamma+1)
		w[0] = one
		for j := 1; j <= gamma; j++ {
			r := new(big.Rat).Mul(w[j-1], p[draft[j-1]])
			r.Quo(r, q[draft[j-1]])
			if r.Cmp(one) > 0 {
				r = one
			}
			w[j] = r
		}
		h := make([]*big.Rat, gamma+1)
		h[0], h[gamma] = one, w[gamma]
		for j := 1; j < gamma; j++ {
			z := new(big.Rat)
			for t := 0; t < v; t++ {
				d := new(big.Rat).Mul(w[j], p[t])
				d.Sub(d, q[t])
				if d.Sign() > 0 {
					z.Add(z, d)
				}
			}
			den := new(big.Rat).Add(z, one)
			den.Sub(den, w[j])
			if den.Sign() == 0 {
				h[j] = one
			} else {
				h[j] = new(big.Rat).Quo(z, den)
			}
		}
		// E[τ] = Σ_i i·h_i·Π_{j>i}(1-h_j).
		et, later := new(big.Rat), big.NewRat(1, 1)
		for j := gamma; j >= 1; j-- {
			m := new(big.Rat).Mul(h[j], later)
			et.Add(et, m.Mul(m, big.NewRat(int64(j), 1)))
			later.Mul(later, new(big.Rat).Sub(one, h[j]))
		}
		et.Add(et, one)
		total.Add(total, et.Mul(et, pr))
	}
	walk(0, big.NewRat(1, 1))
	return total
}

// TestBlockSeedExample checks the two-token example of Leviathan's post "Fixing a 'Bug' in
// Speculative Decoding" (2024) (p = (1/3,
// 2/3), q = (2/3, 1/3), so α = Σmin(p, q) = 2/3) exactly. Token values are
// Eq. 1, (1 - α^(G+1))/(1 - α); block values were derived by hand for G = 2
// (drafts AA, AB, BA, BB with q-probabilities 4/9, 2/9, 2/9, 1/9 keep on
// average τ = 1/2, 2, 3/2, 2 tokens, so E = 1 + 11/9 = 20/9) and for all G
// by ratBlockEmitted in rational arithmetic.
func TestBlockSeedExample(t *testing.T) {
	want := map[int][2]*big.Rat{ // G → {token, block}
		1: {big.NewRat(5, 3), big.NewRat(5, 3)},
		2: {big.NewRat(19, 9), big.NewRat(20, 9)},
		3: {big.NewRat(65, 27), big.NewRat(8, 3)},
		4: {big.NewRat(211, 81), big.NewRat(247, 81)},
	}
	pr := []*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)}
	qr := []*big.Rat{big.NewRat(2, 3), big.NewRat(1, 3)}
	pair := sim.Pair{Name: "seed003", P: sim.Fixed{1.0 / 3, 2.0 / 3}, Q: sim.Fixed{2.0 / 3, 1.0 / 3}}
	for g := 1; g <= 4; g++ {
		if r := ratBlockEmitted(pr, qr, g); r.Cmp(want[g][1]) != 0 {
			t.Errorf("G=%d: rational block E[emitted] = %s, want %s", g, r.RatString(), want[g][1].RatString())
		}
		tok := mustExact(t, pair, Token{}, sim.ExactConfig{Gamma: g})
		blk := mustExact(t, pair, Block{}, sim.ExactConfig{Gamma: g})
		wt, _ := want[g][0].Float64()
		wb, _ := want[g][1].Float64()
		if math.Abs(tok.ExpectedEmitted-wt) > 1e-12 || math.Abs(blk.ExpectedEmitted-wb) > 1e-12 {
			t.Errorf("G=%d: exact token %.15g block %.15g, want %.15g and %.15g", g, tok.ExpectedEmitted, blk.ExpectedEmitted, wt, wb)
		}
		if !blk.Lossless {
			t.Errorf("G=%d: block max_abs_error %g", g, blk.MaxAbsError)
		}
		if g >= 2 && !(blk.ExpectedEmitted > tok.ExpectedEmitted+1e-3) {
			t.Errorf("G=%d: block %.6f does not exceed token %.6f", g, blk.ExpectedEmitted, tok.ExpectedEmitted)
		}
	}
}

// TestBlockLosslessMarkov: on 24 random context-dependent Markov pairs
// (V = 2..6, orders 1 and 2, γ = 1..4) block verification is lossless at
// the sequence level and emits at least as many tokens as token
// verification (Sun et al. Thm 1 and Thm 2).
func TestBlockLosslessMarkov(t *testing.T) {
	rng := sim.NewRand(3, sim.StreamID("test/block/markov"))
	strict := 0
	for k := range 24 {
		cfg := sim.MarkovConfig{V: 2 + k%5, Order: 1 + k%2, A: 0.2 + rng.Float64(), Quality: rng.Float64()}
		g := 1 + (k/2)%4
		if cfg.V == 6 && cfg.Order == 2 {
			g = min(g, 3)
		}
		pair, err := sim.NewMarkovPair(rng, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx := []int{rng.IntN(cfg.V)}
		blk := mustExact(t, pair, Block{}, sim.ExactConfig{Gamma: g, Context: ctx})
		tok := mustExact(t, pair, Token{}, sim.ExactConfig{Gamma: g, Context: ctx})
		if !(blk.MaxAbsError < sim.ExactTol) {
			t.Errorf("%s γ=%d: block max_abs_error %g", pair.Name, g, blk.MaxAbsError)
		}
		if blk.ExpectedEmitted < tok.ExpectedEmitted-1e-12 {
			t.Errorf("%s γ=%d: block E[emitted] %.12f < token %.12f", pair.Name, g, blk.ExpectedEmitted, tok.ExpectedEmitted)
		}
		if blk.ExpectedEmitted > tok.ExpectedEmitted+1e-9 {
			strict++
		}
	}
	// Block's gain is strict whenever γ ≥ 2 and some draft reaches Z_i > 0
	// with w_i < 1; a test in which it never exceeds token would be vacuous.
	if strict < 10 {
		t.Errorf("block beats token strictly on only %d of 24 pairs", strict)
	}
}

// TestBlockTokenwiseFlagged: the exact engine flags the mutant on the seed
// example (max_abs_error = 1/9 at γ = 2, computed by hand in the mutant's
// doc comment) and on a seeded context-dependent pair; at γ = 1 the mutant
// is token verification and is lossless.
func TestBlockTokenwiseFlagged(t *testing.T) {
	pair := sim.Pair{Name: "seed003", P: sim.Fixed{1.0 / 3, 2.0 / 3}, Q: sim.Fixed{2.0 / 3, 1.0 / 3}}
	r := mustExact(t, pair, BlockTokenwise{}, sim.ExactConfig{Gamma: 2})
	first := sim.Marginal(r.Emitted, r.V, r.L, 0)
	if math.Abs(r.MaxAbsError-1.0/9) > 1e-12 || math.Abs(first[0]-0.5) > 1e-12 {
		t.Errorf("seed example γ=2: max_abs_error %g (want 1/9), first-token A %g (want 1/2)", r.MaxAbsError, first[0])
	}
	if r, _ := sim.Exact(pair, BlockTokenwise{}, sim.ExactConfig{Gamma: 1}); !r.Lossless {
		t.Errorf("γ=1: the mutant should coincide with token verification, max_abs_error %g", r.MaxAbsError)
	}
	src, err := source.New("markov:V=4,order=2,seed=7", 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for g := 2; g <= 4; g++ {
		pair, _ := sim.PairOf(src)
		r := mustExact(t, pair, BlockTokenwise{}, sim.ExactConfig{Gamma: g})
		if !(r.MaxAbsError > 1e-12) || r.Lossless {
			t.Errorf("markov γ=%d: mutant not flagged, max_abs_error %g", g, r.MaxAbsError)
		}
		t.Logf("mutant-block-tokenwise on %s γ=%d: max_abs_error %.4g", src.Spec, g, r.MaxAbsError)
	}
}

// randRow returns a random distribution over v tokens: exponentials raised
// to the power k (large k gives peaked rows), with zeros where zero is set.
func randRow(rng *rand.Rand, v int, k float64, zeros int) []float64 {
	p := make([]float64, v)
	for i := range p {
		p[i] = math.Pow(rng.ExpFloat64(), k)
	}
	for range zeros {
		p[rng.IntN(v)] = 0
	}
	if sim.Normalize(p) <= 0 {
		p[0] = 1
	}
	return p
}

// randBlock draws a block with γ positions over v tokens; degenerate
// positions are planted on purpose: p = q (Z = 0 with w = 1), draft tokens
// with p = 0 (w = 0 from there on) and one-hot targets.
func randBlock(rng *rand.Rand, v, g int, f32 bool) *sim.Block {
	b := &sim.Block{Tokens: make([]int, g), Q: make([]sim.Row, g), P: make([]sim.Row, g+1)}
	for i := 0; i <= g; i++ {
		k := 1 + 3*rng.Float64()
		p := randRow(rng, v, k, rng.IntN(2))
		if i < g {
			var q []float64
			switch rng.IntN(8) {
			case 0:
				q = append([]float64(nil), p...) // p = q here
			case 1:
				sim.OneHot(p, v, rng.IntN(v))
				q = randRow(rng, v, k, 0)
			default:
				q = randRow(rng, v, k, 0)
				for x := range q { // correlate q with p
					q[x] += 2 * rng.Float64() * p[x]
				}
				sim.Normalize(q)
			}
			x := sim.SampleCDF(rng.Float64(), q)
			if rng.IntN(10) == 0 { // a draft token the target rules out
				for y := range p {
					if p[y] == 0 && q[y] > 0 {
						x = y
					}
				}
			}
			b.Tokens[i] = x
			b.Q[i] = testRow(q, f32)
		}
		b.P[i] = testRow(p, f32)
	}
	return b
}

// TestBlockLazyMatchesNaive: the fast path and the straightforward form
// give identical outcomes and leave the generator in the same state, over
// many random blocks (float64 and float32, degenerate positions included)
// and seeds.
func TestBlockLazyMatchesNaive(t *testing.T) {
	rng := sim.NewRand(5, sim.StreamID("test/block/lazy"))
	n, passes, possible := 0, 0, 0
	for k := range 3000 {
		v, g := 2+rng.IntN(40), 1+rng.IntN(8)
		b := randBlock(rng, v, g, k%2 == 1)
		if err := b.Check(); err != nil {
			t.Fatal(err)
		}
		for s := range uint64(8) {
			r1 := sim.NewRand(s, uint64(k))
			r2 := sim.NewRand(s, uint64(k))
			o1, np := blockLazy(r1, b)
			o2 := BlockNaive{}.Accept(r2, b)
			if o1 != o2 {
				t.Fatalf("block %d seed %d (V=%d γ=%d): lazy %+v, naive %+v", k, s, v, g, o1, o2)
			}
			if r1.Uint64() != r2.Uint64() {
				t.Fatalf("block %d seed %d: the forms consumed different numbers of uniforms", k, s)
			}
			if err := sim.CheckOutcome(b, o1); err != nil {
				t.Fatal(err)
			}
			n++
			passes += np
			possible += g
		}
	}
	t.Logf("%d steps; lazy computed %d of the %d Z_i the naive form computes (%.1f%%)", n, passes, possible, 100*float64(passes)/float64(possible))
}

// TestBlockLawMatchesSampling: the counts of (Accepted, Next) from Accept
// agree with Law by Pearson's χ² on random blocks (fixed seed; each test at
// level 1e-6, so a correct rule fails with probability below 1e-5 over the
// suite, while a wrong residual or threshold moves whole cells and gives
// p-values far below that at n = 200000). The mutant's law is checked too,
// since the exact engine's verdict on it rests on that law.
func TestBlockLawMatchesSampling(t *testing.T) {
	const n, level = 200000, 1e-6
	rng := sim.NewRand(11, sim.StreamID("test/block/chisq"))
	rules := map[string]interface {
		sim.Algorithm
		sim.Lawer
	}{"block": Block{}, "mutant-block-tokenwise": BlockTokenwise{}}
	for k := range 4 {
		b := randBlock(rng, 3+k%3, 2+k%3, false)
		for name, a := range rules {
			var law sim.Law
			a.Law(b, &law)
			if tot := law.Total(); math.Abs(tot-1) > 1e-12 {
				t.Fatalf("%s block %d: law sums to %.15g", name, k, tot)
			}
			coins := sim.NewRand(uint64(k), sim.StreamID("test/block/chisq/coins", uint64(k)))
			res := blockFit(t, coins, a, b, &law, n)
			if res.PValue < level {
				t.Errorf("%s block %d: χ² = %.1f on %d df, p = %.3g", name, k, res.Stat, res.DF, res.PValue)
			}
		}
	}
}

// TestBlockDegenerate: p = q everywhere keeps the whole draft with
// certainty; a p = 0 draft token at position 1 forces τ = 0 with the
// ordinary residual; no case divides by zero or loses mass.
func TestBlockDegenerate(t *testing.T) {
	p := []float64{0.5, 0.3, 0.2}
	same := &sim.Block{Tokens: []int{0, 1, 2}, Q: []sim.Row{sim.F64(p), sim.F64(p), sim.F64(p)},
		P: []sim.Row{sim.F64(p), sim.F64(p), sim.F64(p), sim.F64(p)}}
	var law sim.Law
	Block{}.Law(same, &law)
	if got := law.Accepted(3); got != 1 {
		t.Errorf("p = q: Pr(accept all) = %g, want 1", got)
	}
	rng := sim.NewRand(1, 1)
	for range 1000 {
		if o := (Block{}).Accept(rng, same); o.Accepted != 3 {
			t.Fatalf("p = q: accepted %d", o.Accepted)
		}
	}
	// p(x_1) = 0: w_1 = 0, so every later w is 0 and τ = 0.
	p0 := []float64{0, 0.5, 0.5}
	q0 := []float64{0.5, 0.25, 0.25}
	zero := &sim.Block{Tokens: []int{0, 1}, Q: []sim.Row{sim.F64(q0), sim.F64(q0)},
		P: []sim.Row{sim.F64(p0), sim.F64(p0), sim.F64(p0)}}
	Block{}.Law(zero, &law)
	if law.Accepted(0) != 1 || law.At(0, 1) != 0.5 || law.At(0, 2) != 0.5 {
		t.Errorf("p(x_1) = 0: law %v, want all mass on τ = 0 with residual (0, 1/2, 1/2)", law.P)
	}
	for range 1000 {
		if o, np := blockLazy(rng, zero); o.Accepted != 0 || o.Next == 0 || np != 1 {
			t.Fatalf("p(x_1) = 0: outcome %+v after %d passes", o, np)
		}
	}
	// The exact engine on p = q as a model pair: lossless, γ+1 tokens.
	r := mustExact(t, sim.Pair{P: sim.Fixed(p), Q: sim.Fixed(p)}, Block{}, sim.ExactConfig{Gamma: 3})
	if !r.Lossless || math.Abs(r.ExpectedEmitted-4) > 1e-12 {
		t.Errorf("p = q: lossless %v, E[emitted] %g (want 4)", r.Lossless, r.ExpectedEmitted)
	}
}

// TestBlockGreedyIsToken: with one-hot targets every w_i is 0 or 1 and
// block verification has token verification's law (Sun et al. §6.2).
func TestBlockGreedyIsToken(t *testing.T) {
	rng := sim.NewRand(2, sim.StreamID("test/block/greedy"))
	var lb, lt sim.Law
	for range 200 {
		b := randBlock(rng, 5, 4, false)
		for i := range b.P {
			p := b.P[i].Float64s(nil)
			sim.OneHot(p, len(p), sim.Argmax(p))
			b.P[i] = sim.F64(p)
		}
		Block{}.Law(b, &lb)
		Token{}.Law(b, &lt)
		for j := range lb.P {
			if math.Abs(lb.P[j]-lt.P[j]) > 1e-15 {
				t.Fatalf("one-hot targets: block and token laws differ at %d: %g vs %g", j, lb.P[j], lt.P[j])
			}
		}
	}
}

func TestBlockNoAlloc(t *testing.T) {
	b := randBlock(sim.NewRand(1, 2), 50, 8, true)
	rng := sim.NewRand(1, 3)
	for name, a := range map[string]sim.Algorithm{"block": Block{}, "naive": BlockNaive{}, "mutant": BlockTokenwise{}} {
		if n := testing.AllocsPerRun(200, func() { a.Accept(rng, b) }); n != 0 {
			t.Errorf("%s: %g allocations per step", name, n)
		}
	}
}

func TestBlockRegistered(t *testing.T) {
	a, err := New("block", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.(Block); !ok || !HasLaw(a) {
		t.Errorf("block: got %T", a)
	}
	e, err := Lookup("mutant-block-tokenwise")
	if err != nil || !e.Mutant {
		t.Errorf("mutant-block-tokenwise: %v, mutant %v", err, e.Mutant)
	}
}

// ExampleBlock verifies one draft of the two-token example of Leviathan's post (2024) and
// prints the exact tokens per step of block and token verification.
func ExampleBlock() {
	p, q := []float64{1.0 / 3, 2.0 / 3}, []float64{2.0 / 3, 1.0 / 3}
	b := &sim.Block{Tokens: []int{0, 0, 1}, // w = 1/2, 1/4, 1/2
		Q: []sim.Row{sim.F64(q), sim.F64(q), sim.F64(q)},
		P: []sim.Row{sim.F64(p), sim.F64(p), sim.F64(p), sim.F64(p)}}
	rng := sim.NewRand(42, sim.StreamID("example/block"))
	for range 5 {
		fmt.Printf("%+v\n", Block{}.Accept(rng, b))
	}
	pair := sim.Pair{P: sim.Fixed(p), Q: sim.Fixed(q)}
	for g := 1; g <= 4; g++ {
		blk, _ := sim.Exact(pair, Block{}, sim.ExactConfig{Gamma: g})
		tok, _ := sim.Exact(pair, Token{}, sim.ExactConfig{Gamma: g})
		fmt.Printf("gamma=%d block %.6f token %.6f\n", g, blk.ExpectedEmitted, tok.ExpectedEmitted)
	}
	// Output:
	// {Accepted:0 Next:1}
	// {Accepted:3 Next:1}
	// {Accepted:0 Next:1}
	// {Accepted:3 Next:0}
	// {Accepted:3 Next:1}
	// gamma=1 block 1.666667 token 1.666667
	// gamma=2 block 2.222222 token 2.111111
	// gamma=3 block 2.666667 token 2.407407
	// gamma=4 block 3.049383 token 2.604938
}
