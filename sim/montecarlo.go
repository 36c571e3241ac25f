package sim

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// ChunkSize is the number of trials in one unit of Monte Carlo work.
// Chunk boundaries depend only on the trial count, never on the number of
// workers, and chunk results are merged in chunk order, so results are
// bit-identical for any worker count.
const ChunkSize = 1024

// mcWindow is how many chunks per worker may be handed out beyond the
// oldest chunk not yet merged. It bounds the accumulators alive at once to
// mcWindow·workers whatever the trial count, at the price of a worker
// waiting when one chunk is much slower than the rest.
const mcWindow = 4

// MaxTrials is the largest trial count a command accepts (10¹²): at the
// harness's 10⁶–10⁷ trials per second and core it is already days of
// work, and far below where an int64 count or a float64 scale product
// loses precision or wraps. Memory does not limit it (MonteCarlo keeps
// O(workers) accumulators).
const MaxTrials = 1_000_000_000_000

// CheckTrials returns an error "<name> = n; …" when n is not a trial
// count in [1, MaxTrials]; name is the caller's (a field, or a flag on
// the command line).
func CheckTrials(name string, n int64) error {
	if n < 1 || n > MaxTrials {
		return fmt.Errorf("%s = %d; use 1 to %d (1e12) trials", name, n, int64(MaxTrials))
	}
	return nil
}

// Workers is the worker count the harness uses for a requested n: n, or
// runtime.NumCPU() (all cores) when n <= 0.
func Workers(n int) int {
	if n <= 0 {
		return runtime.NumCPU()
	}
	return n
}

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
// NewRand(seed, StreamID(name, i))). Finished chunks are merged into one
// total with merge(dst, src) in chunk order as soon as every earlier chunk
// is merged, so memory is O(workers) accumulators, not O(n/ChunkSize), and
// the result is bit-identical for any worker count.
//
// If ctx is cancelled, MonteCarlo stops handing out chunks, cuts the running
// ones short (within cancelEvery trials), and returns the merged result of
// the contiguous run of trials finished before the first cut: the whole
// chunks before the first cut one and the trials that chunk finished
// before its cut (a chunk of slow trials, such as an external
// implementation's batches, may hold all the work done), the number of
// trials it holds (always a prefix 0..count-1), and ctx.Err(). A nil
// newAcc result is not allowed; n < 0 counts as 0.
func MonteCarlo[A any](ctx context.Context, n int64, opt MCOptions, newAcc func() A, trial func(i int64, acc A), merge func(dst, src A)) (A, int64, error) {
	workers := Workers(opt.Workers)
	n = max(n, 0)
	chunks := n / ChunkSize // written so that n near MaxInt64 cannot overflow
	if n%ChunkSize != 0 {
		chunks++
	}
	size := func(c int64) int64 { return min(n-c*ChunkSize, ChunkSize) }
	window := int64(workers) * mcWindow

	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		next    int64           // next chunk to hand out
		merged  int64           // chunks [0, merged) are in total or skipped
		pending = map[int64]A{} // finished chunks waiting for earlier ones
		partial = map[int64]struct {
			acc A
			k   int64
		}{} // cut chunks: the accumulator of their first k trials
		total = newAcc()
		count int64
		done  int64
	)
	// flush merges the contiguous run of finished chunks; mu is held.
	flush := func() {
		for {
			acc, ok := pending[merged]
			if !ok {
				return
			}
			merge(total, acc)
			count += size(merged)
			delete(pending, merged)
			merged++
			cond.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for range min(int64(workers), max(chunks, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for next < chunks && next-merged >= window && ctx.Err() == nil {
					cond.Wait()
				}
				if next >= chunks || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				c := next
				next++
				mu.Unlock()

				acc := newAcc()
				cut := false
				i := c * ChunkSize
				for ; i < c*ChunkSize+size(c); i++ {
					if i%cancelEvery == 0 && cancelled(ctx) {
						cut = true
						break
					}
					trial(i, acc)
				}
				if cut {
					// A cut chunk is merged only as the end of the
					// prefix: its trials before the cut, after every
					// earlier chunk (see the end).
					mu.Lock()
					partial[c] = struct {
						acc A
						k   int64
					}{acc, i - c*ChunkSize}
					mu.Unlock()
					return
				}

				mu.Lock()
				pending[c] = acc
				done += size(c)
				if opt.Progress != nil {
					opt.Progress(done, n)
				}
				flush()
				mu.Unlock()
			}
		}()
	}
	// Wake waiters when ctx is cancelled so they can return.
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
	})
	wg.Wait()
	stop()
	// flush has merged the contiguous run of whole chunks; the first cut
	// chunk's finished trials extend it when every chunk before it is
	// merged, and chunks after it stay in pending and are dropped.
	if p, ok := partial[merged]; ok && p.k > 0 {
		merge(total, p.acc)
		count += p.k
	}
	return total, count, ctx.Err()
}

// cancelEvery is how many trials run between two looks at ctx, so that a
// cancellation stops a chunk of slow trials (a V = 2048 rule at ~0.5 ms a
// trial makes a 1024-trial chunk last half a second) within a few trials.
const cancelEvery = 8

// cancelled reports whether ctx is done without blocking; it costs a
// channel poll, not the lock that ctx.Err takes.
func cancelled(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}
