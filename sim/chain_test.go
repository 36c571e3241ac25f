package sim_test

import (
	"sync"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// TestChainDraftsLikeTheLoop: Chain.Next draws x_i = SampleCDF(u_i, q(.|x<i))
// with one rng.Float64 per token and scores every prefix with both models,
// exactly as the hand-written loops it replaced; once dst is filled it
// does not allocate.
func TestChainDraftsLikeTheLoop(t *testing.T) {
	src := newSource(t, "markov:V=5,order=2,quality=0.3,seed=9", 3, 0)
	pair, ok := sim.PairOf(src)
	if !ok {
		t.Fatal("a markov source has no pair")
	}
	if _, ok := sim.PoolOf(src); ok {
		t.Fatal("a markov source claims to be a pool")
	}
	var b sim.Block
	q, p := make([]float64, 5), make([]float64, 5)
	for s := range uint64(50) {
		if err := src.Next(sim.NewRand(s, 1), &b); err != nil {
			t.Fatal(err)
		}
		if b.Ctx != -1 || b.Gamma() != 3 || len(b.P) != 4 {
			t.Fatalf("block shape: ctx %d, γ %d, %d p rows", b.Ctx, b.Gamma(), len(b.P))
		}
		rng := sim.NewRand(s, 1)
		for i := 0; i <= 3; i++ {
			pair.P.Next(b.Tokens[:i], p)
			for x := range p {
				if b.P[i].At(x) != p[x] {
					t.Fatalf("seed %d: p row %d differs at %d", s, i, x)
				}
			}
			if i == 3 {
				break
			}
			pair.Q.Next(b.Tokens[:i], q)
			if x := sim.SampleCDF(rng.Float64(), q); x != b.Tokens[i] {
				t.Fatalf("seed %d: token %d is %d, the loop draws %d", s, i, b.Tokens[i], x)
			}
		}
		if err := b.Check(); err != nil {
			t.Fatal(err)
		}
	}
	rng := sim.NewRand(1, 2)
	if n := testing.AllocsPerRun(100, func() { _ = src.Next(rng, &b) }); n != 0 {
		t.Errorf("Chain.Next allocates %g times per call on a filled block", n)
	}
}

// TestPoolNext: Pool.Next is Fill at a context drawn with rng.IntN, sets
// Ctx, and concurrent calls with distinct rngs and blocks give the same
// blocks as sequential ones (the alias tables are built by NewPool).
func TestPoolNext(t *testing.T) {
	src := newSource(t, "zipf:V=300,contexts=7", 4, 3)
	pl, ok := sim.PoolOf(src)
	if !ok {
		t.Fatal("a zipf source is not a pool")
	}
	const n = 64
	want := make([]sim.Block, n)
	for i := range want {
		r1, r2 := sim.NewRand(5, uint64(i)), sim.NewRand(5, uint64(i))
		if err := pl.Next(r1, &want[i]); err != nil {
			t.Fatal(err)
		}
		var b sim.Block
		pl.Fill(r2, r2.IntN(pl.Contexts), &b)
		if b.Ctx != want[i].Ctx || b.Ctx < 0 || b.Ctx >= pl.Contexts {
			t.Fatalf("ctx %d vs Fill's %d", want[i].Ctx, b.Ctx)
		}
		for j := range b.Tokens {
			if b.Tokens[j] != want[i].Tokens[j] {
				t.Fatalf("step %d: Next and Fill draw different tokens", i)
			}
		}
	}
	got := make([]sim.Block, n)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = pl.Next(sim.NewRand(5, uint64(i)), &got[i])
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i].Ctx != want[i].Ctx {
			t.Fatalf("step %d: concurrent ctx %d, sequential %d", i, got[i].Ctx, want[i].Ctx)
		}
		for j := range got[i].Tokens {
			if got[i].Tokens[j] != want[i].Tokens[j] {
				t.Fatalf("step %d: concurrent and sequential drafts differ", i)
			}
		}
	}
	var _ sim.BlockSource = pl
	var _ sim.PairSource = (*sim.Chain)(nil)
}

// newSource builds a source the test expects to be valid.
func newSource(t testing.TB, spec string, gamma int, seed uint64) sim.Source {
	t.Helper()
	src, err := source.New(spec, gamma, seed, 0)
	if err != nil {
		t.Fatal(err)
	}
	return src
}
