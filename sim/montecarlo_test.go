package sim_test

import (
	"context"
	"math"
	"sync"
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
	// One worker: the chunk that sees the cancellation is cut within
	// cancelEvery (8) trials, and the trials it ran before the cut (all 8
	// of them: the cut falls on trial 3·1024+8) extend the three chunks
	// before it (issue 23: a chunk of slow trials may hold all the work).
	ctx, cancel := context.WithCancel(context.Background())
	ran := int64(0)
	r, n, err := sim.MonteCarlo(ctx, 1<<20, sim.MCOptions{Workers: 1},
		func() *sums { return &sums{} },
		func(i int64, acc *sums) {
			ran++
			if i == 3*sim.ChunkSize+1 {
				cancel()
			}
			acc.n++
		},
		func(dst, src *sums) { dst.n += src.n })
	if err == nil {
		t.Fatal("no error after cancellation")
	}
	if n != 3*sim.ChunkSize+8 || r.n != float64(n) || n != ran {
		t.Errorf("one worker, cancelled in chunk 3: %d trials reported, %g merged, %d ran; want %d", n, r.n, ran, 3*sim.ChunkSize+8)
	}
	if after := ran - (3*sim.ChunkSize + 2); after > 8 {
		t.Errorf("%d trials ran after the cancellation, want at most 8", after)
	}

	// Two workers: whatever the interleaving, the result is a prefix
	// that ends within 8 trials of the cancel.
	cancelTwoWorkers(t, 1<<20, 3)
}

// cancelTwoWorkers runs MonteCarlo over trials counting trials on two
// workers, cancels at the first trial of chunk c, and checks that the
// result is a prefix (the trials merged are the trials reported) of at
// most c chunks and the cancelling chunk's trials run before the cut,
// which comes within cancelEvery (8) trials of the cancel.
func cancelTwoWorkers(t *testing.T, trials, c int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, n, err := sim.MonteCarlo(ctx, trials, sim.MCOptions{Workers: 2},
		func() *sums { return &sums{} },
		func(i int64, acc *sums) {
			if i == c*sim.ChunkSize {
				cancel()
			}
			acc.n++
		},
		func(dst, src *sums) { dst.n += src.n })
	if err == nil || n > c*sim.ChunkSize+8 || float64(n) != r.n {
		t.Errorf("%d trials on two workers, cancelled in chunk %d: %d trials reported, %g merged, err %v; want a prefix of at most %d chunks and 8 trials", trials, c, n, r.n, err, c)
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

// TestMonteCarloBoundedMemory: accumulators alive at once stay O(workers)
// whatever the trial count (chunks merge in order as they finish), and a
// trial count near MaxInt64 neither overflows nor allocates per chunk up
// front; it is stopped by cancellation after a few chunks.
func TestMonteCarloBoundedMemory(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	live, peak := 0, 0
	const workers = 3
	_, n, err := sim.MonteCarlo(context.Background(), 200*sim.ChunkSize, sim.MCOptions{Workers: workers},
		func() *sums {
			mu.Lock()
			live++
			peak = max(peak, live)
			mu.Unlock()
			return &sums{}
		},
		func(i int64, acc *sums) { acc.n++ },
		func(dst, src *sums) {
			mu.Lock()
			live--
			mu.Unlock()
			dst.n += src.n
		})
	if err != nil || n != 200*sim.ChunkSize {
		t.Fatalf("n = %d, err = %v", n, err)
	}
	// The total plus at most mcWindow (4) chunks per worker beyond the
	// oldest unmerged one, plus the chunk each worker holds.
	if limit := 1 + 4*workers + workers; peak > limit {
		t.Errorf("peak live accumulators %d, want <= %d for %d workers", peak, limit, workers)
	}

	cancelTwoWorkers(t, math.MaxInt64, 5)
}
