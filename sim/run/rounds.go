package run

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"

	"github.com/specsim/specsim/sim"
)

// Rounds runs trials 0..n-1 of l on opt.Workers goroutines and returns the
// merged accumulator, the number of trials it holds and the first error.
// Units of l.Batch rounds are the Monte Carlo trials of sim.MonteCarlo:
// each chunk of units gets a fresh accumulator from newAcc, record adds one
// round to it, and merge folds finished chunks together in chunk order, so
// the result is bit-identical for any worker count.
//
// The first error from a drafter, a verifier or record stops the run and
// is returned with a zero count. If ctx is cancelled, Rounds returns the
// merged prefix of units finished so far, its trial count and ctx.Err(),
// as sim.MonteCarlo does; so does an error that wraps context.Canceled
// (a verifier that gave up a wait because ctx ended, as an external
// implementation does), which is returned in place of ctx.Err(): the
// units before the first such failure are kept, the failed unit and
// those after it are not. opt.Progress, if set, receives finished
// trials, not units.
func Rounds[A any](ctx context.Context, n int64, l *Loop, opt sim.MCOptions, newAcc func() A, record func(acc A, r *Round) error, merge func(dst, src A)) (A, int64, error) {
	n = max(n, 0)
	b := int64(l.batch())
	return RoundsRange(ctx, 0, (n+b-1)/b, n, l, opt, newAcc, record, merge)
}

// RoundsRange is Rounds over units lo..hi-1 of a run of n trials: each
// unit keeps its absolute index (its keyed streams, its trials
// u·Batch..min((u+1)·Batch, n)-1), so the union of disjoint ranges' rounds
// is exactly Rounds' (a sharded check, sim/check). Chunks of
// sim.ChunkSize units start at lo, so with lo a multiple of ChunkSize they
// are Rounds' own chunks. It returns the merged accumulator and the
// trials it holds (those of units lo..lo+k-1 for the k units done).
func RoundsRange[A any](ctx context.Context, lo, hi, n int64, l *Loop, opt sim.MCOptions, newAcc func() A, record func(acc A, r *Round) error, merge func(dst, src A)) (A, int64, error) {
	var zero A
	if err := l.check(); err != nil {
		return zero, 0, err
	}
	b := int64(l.batch())
	n = max(n, 0)
	units := (n + b - 1) / b
	lo, hi = min(max(lo, 0), units), min(max(hi, 0), units)
	hi = max(hi, lo)
	// trials of units lo..lo+k-1
	trials := func(k int64) int64 { return max(min((lo+k)*b, n)-lo*b, 0) }
	if p := opt.Progress; p != nil {
		total := trials(hi - lo)
		opt.Progress = func(done, _ int64) { p(trials(done), total) }
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &roundsRun[A]{l: l, n: n, lo: lo, newAcc: newAcc, record: record, merge: merge, ctx: cctx, cancel: cancel}
	r.stop.Store(math.MaxInt64)
	// stopped is set once cctx ends; a unit looks at it after each round,
	// so a unit of slow rounds (a law over V = 4M tokens takes ~80 ms a
	// round, a unit of 16 over a second) stops within a round.
	defer context.AfterFunc(cctx, func() { r.stopped.Store(true) })()
	tot, done, err := sim.MonteCarlo(cctx, hi-lo, opt, r.newChunk, r.unit, r.mergeChunks)
	if r.firstErr != nil && !errors.Is(r.firstErr, context.Canceled) {
		return zero, 0, r.firstErr
	}
	done = min(done, r.stop.Load())
	if r.firstErr != nil {
		err = r.firstErr
	}
	return tot.acc, trials(done), err
}

// roundsChunk is a chunk of Rounds' units: its accumulator and the
// worker that runs it.
type roundsChunk[A any] struct {
	acc A
	w   *Worker
}

// roundsRun is one Rounds call's state. Workers are pooled: a chunk takes
// one for its units and the merge hands it back, so the storage kept is
// about one per goroutine. stop is the first unit (counted from lo)
// that failed or was
// skipped after a cancellation: units from it on recorded nothing, though
// sim.MonteCarlo counts them in its prefix.
type roundsRun[A any] struct {
	l        *Loop
	n, lo    int64 // the run's trials; the first unit of the range
	newAcc   func() A
	record   func(acc A, r *Round) error
	merge    func(dst, src A)
	ctx      context.Context
	cancel   context.CancelFunc
	pool     sync.Pool
	once     sync.Once
	firstErr error
	stop     atomic.Int64
	stopped  atomic.Bool
}

// lower lowers stop to unit u.
func (r *roundsRun[A]) lower(u int64) {
	for {
		s := r.stop.Load()
		if u >= s || r.stop.CompareAndSwap(s, u) {
			return
		}
	}
}

// fail records unit u's failure: stop is lowered to it, and the first
// error is kept and cancels the run.
func (r *roundsRun[A]) fail(u int64, err error) {
	r.lower(u)
	r.once.Do(func() { r.firstErr = err; r.cancel() })
}

// newChunk is a chunk with a fresh accumulator and a pooled (or new)
// worker.
func (r *roundsRun[A]) newChunk() *roundsChunk[A] {
	c := &roundsChunk[A]{acc: r.newAcc()}
	if w, ok := r.pool.Get().(*Worker); ok {
		c.w = w
	} else if w, err := r.l.NewWorker(); err == nil { // checked by Rounds
		c.w = w
	}
	return c
}

// unit runs unit lo+u's rounds into c, unless the run has stopped.
func (r *roundsRun[A]) unit(u int64, c *roundsChunk[A]) {
	if r.stopped.Load() {
		r.lower(u) // not run: the prefix ends before it
		return
	}
	if e := c.w.Unit(r.lo+u, r.n, func(rd *Round) error {
		if r.stopped.Load() {
			return r.ctx.Err()
		}
		return r.record(c.acc, rd)
	}); e != nil {
		r.fail(u, e)
	}
}

// mergeChunks folds src into dst and hands src's worker back to the pool.
func (r *roundsRun[A]) mergeChunks(dst, src *roundsChunk[A]) {
	r.merge(dst.acc, src.acc)
	r.pool.Put(src.w)
	src.w = nil
}
