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
	// WholeChunks, on cancellation, keeps only the whole chunks before
	// the first cut one (the cut chunk's finished trials are dropped), so
	// the prefix returned ends on a chunk boundary: a run resumed from it
	// (sim/check's shard states) has the same chunks, and so the same
	// floating-point sums, as one that was never interrupted.
	WholeChunks bool
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
	r := &mcRun[A]{ctx: ctx, n: n, chunks: chunks, window: int64(workers) * mcWindow, opt: opt,
		newAcc: newAcc, trial: trial, merge: merge,
		pending: map[int64]A{}, partial: map[int64]mcPartial[A]{}}
	r.cond = sync.NewCond(&r.mu)
	r.total = newAcc()
	var wg sync.WaitGroup
	for range min(int64(workers), max(chunks, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work()
		}()
	}
	// Wake waiters when ctx is cancelled so they can return.
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	wg.Wait()
	stop()
	// flush has merged the contiguous run of whole chunks; the first cut
	// chunk's finished trials extend it when every chunk before it is
	// merged, and chunks after it stay in pending and are dropped.
	if p, ok := r.partial[r.merged]; ok && p.k > 0 && !opt.WholeChunks {
		merge(r.total, p.acc)
		r.count += p.k
	}
	return r.total, r.count, ctx.Err()
}

// mcRun is one MonteCarlo call's state, shared by its workers; the fields
// from next on are guarded by mu.
type mcRun[A any] struct {
	ctx               context.Context
	n, chunks, window int64
	opt               MCOptions
	newAcc            func() A
	trial             func(i int64, acc A)
	merge             func(dst, src A)
	mu                sync.Mutex
	cond              *sync.Cond
	next              int64                  // next chunk to hand out
	merged            int64                  // chunks [0, merged) are in total or skipped
	pending           map[int64]A            // finished chunks waiting for earlier ones
	partial           map[int64]mcPartial[A] // cut chunks
	total             A
	count, done       int64
}

// mcPartial is a cut chunk: the accumulator of its first k trials.
type mcPartial[A any] struct {
	acc A
	k   int64
}

// size is the number of trials of chunk c.
func (r *mcRun[A]) size(c int64) int64 { return min(r.n-c*ChunkSize, ChunkSize) }

// work is one worker: it takes chunks in turn and runs them until none is
// left or ctx is cancelled; a cut chunk ends it.
func (r *mcRun[A]) work() {
	for {
		c, ok := r.take()
		if !ok {
			return
		}
		acc, k, cut := r.runChunk(c)
		r.mu.Lock()
		if cut {
			// A cut chunk is merged only as the end of the prefix: its
			// trials before the cut, after every earlier chunk (see
			// MonteCarlo's end).
			r.partial[c] = mcPartial[A]{acc, k}
			r.mu.Unlock()
			return
		}
		r.pending[c] = acc
		r.done += r.size(c)
		if r.opt.Progress != nil {
			r.opt.Progress(r.done, r.n)
		}
		r.flush()
		r.mu.Unlock()
	}
}

// take hands out the next chunk, waiting while mcWindow·workers chunks
// beyond the oldest unmerged one are out; ok is false when every chunk is
// handed out or ctx is cancelled.
func (r *mcRun[A]) take() (c int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.next < r.chunks && r.next-r.merged >= r.window && r.ctx.Err() == nil {
		r.cond.Wait()
	}
	if r.next >= r.chunks || r.ctx.Err() != nil {
		return 0, false
	}
	c = r.next
	r.next++
	return c, true
}

// runChunk runs chunk c's trials into a fresh accumulator, looking at ctx
// every cancelEvery trials; cut reports that it stopped after its first k
// trials.
func (r *mcRun[A]) runChunk(c int64) (acc A, k int64, cut bool) {
	acc = r.newAcc()
	ctx, trial := r.ctx, r.trial
	first := c * ChunkSize
	end := first + r.size(c)
	for i := first; i < end; i++ {
		if i%cancelEvery == 0 && cancelled(ctx) {
			return acc, i - first, true
		}
		trial(i, acc)
	}
	return acc, 0, false
}

// flush merges the contiguous run of finished chunks; mu is held.
func (r *mcRun[A]) flush() {
	for {
		acc, ok := r.pending[r.merged]
		if !ok {
			return
		}
		r.merge(r.total, acc)
		r.count += r.size(r.merged)
		delete(r.pending, r.merged)
		r.merged++
		r.cond.Broadcast()
	}
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
