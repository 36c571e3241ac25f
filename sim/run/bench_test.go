package run_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
)

// benchBlocks draws n blocks of a V = 32,000, γ = 4 pool (the shared
// benchmark's shape, 16 contexts) before timing.
func benchBlocks(b *testing.B, n int) []sim.Block {
	b.Helper()
	src, err := source.New("dirichlet:V=32000,a=0.1,beta=0.7,contexts=16", 4, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	pl, _ := sim.PoolOf(src.BlockSource)
	rng := sim.NewRand(1, 1)
	bs := make([]sim.Block, n)
	for i := range bs {
		pl.Fill(rng, i%pl.Contexts, &bs[i])
	}
	return bs
}

// The round loop's cost over calling the rule directly, on the shared
// benchmark's workload (token and block verification at V = 32,000,
// γ = 4): compare BenchmarkVerifyDirect and BenchmarkVerifyRound with
// benchstat (go test ./sim/run -run XXX -bench Verify -count 10).
func BenchmarkVerifyDirect(b *testing.B) {
	bs := benchBlocks(b, 256)
	for _, a := range []sim.Algorithm{algos.Token{}, algos.Block{}} {
		b.Run(name(a), func(b *testing.B) {
			rng := sim.NewRand(2, 2)
			for i := 0; b.Loop(); i++ {
				_ = a.Accept(rng, &bs[i%len(bs)])
			}
		})
	}
}

func BenchmarkVerifyRound(b *testing.B) {
	bs := benchBlocks(b, 256)
	for _, a := range []sim.Algorithm{algos.Token{}, algos.Block{}} {
		b.Run(name(a), func(b *testing.B) {
			given := &run.Given{}
			l := &run.Loop{Keys: run.Named("bench"), Chains: given, Verifiers: []run.Verifier{run.Chain(a)}}
			w, err := l.NewWorker()
			if err != nil {
				b.Fatal(err)
			}
			s := run.Shared(sim.NewRand(2, 2))
			for i := 0; b.Loop(); i++ {
				given.B = &bs[i%len(bs)]
				if _, err := w.Round(s, int64(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func name(a sim.Algorithm) string {
	if _, ok := a.(algos.Token); ok {
		return "token"
	}
	return "block"
}

// timingProbe is token verification that records whether sim.Timing
// held at every step.
type timingProbe struct {
	algos.Token
	steps, timed *int64
}

func (a timingProbe) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	atomic.AddInt64(a.steps, 1)
	if sim.Timing() {
		atomic.AddInt64(a.timed, 1)
	}
	return a.Token.Accept(rng, b)
}

// TestBenchTimes: every step Bench times runs under sim.Timing, so the
// rules that keep values derived from a pool's recurring rows compute
// them as an engine would; after it, Timing is off again.
func TestBenchTimes(t *testing.T) {
	src, err := source.New("dirichlet:V=64,contexts=4", 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := sim.PoolOf(src.BlockSource)
	var steps, timed int64
	if _, err := run.Bench(context.Background(), pl, timingProbe{steps: &steps, timed: &timed},
		sim.BenchConfig{V: 64, Gamma: 2, Duration: 20 * time.Millisecond, Workers: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if steps == 0 || timed != steps || sim.Timing() {
		t.Fatalf("%d of %d steps ran under sim.Timing, Timing after the bench %v; want all of at least one, and false", timed, steps, sim.Timing())
	}
}
