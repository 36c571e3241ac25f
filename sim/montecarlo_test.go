package sim_test

import (
	"context"
	"testing"

	"github.com/specsim/specsim/sim"
)

type sums struct{ n, s float64 }

// TestMonteCarloWorkers checks that results are bit-identical for any
// worker count: trials draw from keyed streams and chunks merge in order.
func TestMonteCarloWorkers(t *testing.T) {
	t.Parallel()
	run := func(workers int) sums {
		r, n, err := sim.MonteCarlo(context.Background(), 10000, sim.MCOptions{Workers: workers},
			func() *sums { return &sums{} },
			func(i int64, acc *sums) {
				rng := sim.NewRand(42, sim.StreamID("mc-test", uint64(i)))
				acc.n++
				acc.s += rng.Float64() * 1e-3 // floats: order of addition matters
			},
			func(dst, src *sums) { dst.n += src.n; dst.s += src.s })
		if err != nil || n != 10000 {
			t.Fatalf("workers %d: n = %d, err = %v", workers, n, err)
		}
		return *r
	}
	one := run(1)
	for _, w := range []int{2, 3, 7} {
		if got := run(w); got != one {
			t.Errorf("workers %d gave %+v, workers 1 gave %+v", w, got, one)
		}
	}
}

func TestMonteCarloCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	r, n, err := sim.MonteCarlo(ctx, 1<<20, sim.MCOptions{Workers: 2},
		func() *sums { return &sums{} },
		func(i int64, acc *sums) {
			if i == 3*sim.ChunkSize {
				cancel()
			}
			acc.n++
		},
		func(dst, src *sums) { dst.n += src.n })
	if err == nil {
		t.Fatal("no error after cancellation")
	}
	if n == 0 || n >= 1<<20 || float64(n) != r.n || n%sim.ChunkSize != 0 {
		t.Errorf("after cancellation: %d trials reported, %g merged; want whole finished chunks only", n, r.n)
	}
}

// TestStreamReset: a reset Stream draws the same numbers as a fresh
// NewRand on the same key, after any earlier use.
func TestStreamReset(t *testing.T) {
	t.Parallel()
	s := sim.NewStream()
	for k := uint64(0); k < 50; k++ {
		s.Reset(9, k+100).Uint64() // leave state behind
		got, want := s.Reset(3, k), sim.NewRand(3, k)
		for range 5 {
			if a, b := got.Float64(), want.Float64(); a != b {
				t.Fatalf("stream %d: reset %v, NewRand %v", k, a, b)
			}
		}
	}
}
