package sim

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// ChunkSize is the number of trials in one unit of Monte Carlo work.
// Chunk boundaries depend only on the trial count, never on the number of
// workers, and chunk results are merged in chunk order, so results are
// bit-identical for any worker count.
const ChunkSize = 1024

// MCOptions configures MonteCarlo.
type MCOptions struct {
	// Workers is the number of goroutines; 0 means runtime.NumCPU().
	Workers int
	// Progress, if set, is called with the number of finished trials after
	// every chunk, from one goroutine at a time.
	Progress func(done, total int64)
}

// MonteCarlo runs trials 0..n-1. Each chunk of ChunkSize consecutive trials
// gets a fresh accumulator from newAcc; trial(i, acc) runs trial i into it
// (it must derive all randomness from i, for example with
// NewRand(seed, StreamID(name, i))). Finished chunks are merged into the
// first one in chunk order with merge(dst, src).
//
// If ctx is cancelled, MonteCarlo stops handing out chunks, waits for the
// running ones, merges every finished chunk and returns the merged result,
// the number of trials it holds, and ctx.Err(). A nil newAcc result is not
// allowed.
func MonteCarlo[A any](ctx context.Context, n int64, opt MCOptions, newAcc func() A, trial func(i int64, acc A), merge func(dst, src A)) (A, int64, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	chunks := (n + ChunkSize - 1) / ChunkSize
	results := make([]A, chunks)
	finished := make([]bool, chunks)
	var next, done atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(int64(workers), max(chunks, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c := next.Add(1) - 1
				if c >= chunks {
					return
				}
				acc := newAcc()
				lo, hi := c*ChunkSize, min((c+1)*ChunkSize, n)
				for i := lo; i < hi; i++ {
					trial(i, acc)
				}
				results[c] = acc
				d := done.Add(hi - lo)
				mu.Lock()
				finished[c] = true
				if opt.Progress != nil {
					opt.Progress(d, n)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := newAcc()
	var count int64
	for c := range chunks {
		if finished[c] {
			merge(total, results[c])
			count += min((c+1)*ChunkSize, n) - c*ChunkSize
		}
	}
	return total, count, ctx.Err()
}
