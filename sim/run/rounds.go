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
	var zero A
	if err := l.check(); err != nil {
		return zero, 0, err
	}
	b := int64(l.batch())
	n = max(n, 0)
	units := (n + b - 1) / b
	if p := opt.Progress; p != nil {
		opt.Progress = func(done, _ int64) { p(min(done*b, n), n) }
	}
	// Workers are pooled: a chunk takes one for its units and the merge
	// hands it back, so the storage kept is about one per goroutine.
	type chunk struct {
		acc A
		w   *Worker
	}
	var pool sync.Pool
	var (
		once     sync.Once
		firstErr error
	)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// stop is the first unit that failed or was skipped after a
	// cancellation: units from it on recorded nothing, though
	// sim.MonteCarlo counts them in its prefix.
	var stop atomic.Int64
	stop.Store(math.MaxInt64)
	lower := func(u int64) {
		for {
			s := stop.Load()
			if u >= s || stop.CompareAndSwap(s, u) {
				return
			}
		}
	}
	fail := func(u int64, err error) {
		lower(u)
		once.Do(func() { firstErr = err; cancel() })
	}
	newChunk := func() *chunk {
		c := &chunk{acc: newAcc()}
		if w, ok := pool.Get().(*Worker); ok {
			c.w = w
		} else if w, err := l.NewWorker(); err == nil { // checked above
			c.w = w
		}
		return c
	}
	// stopped is set once cctx ends; a unit looks at it after each round,
	// so a unit of slow rounds (a law over V = 4M tokens takes ~80 ms a
	// round, a unit of 16 over a second) stops within a round.
	var stopped atomic.Bool
	defer context.AfterFunc(cctx, func() { stopped.Store(true) })()
	tot, done, err := sim.MonteCarlo(cctx, units, opt, newChunk, func(u int64, c *chunk) {
		if stopped.Load() {
			lower(u) // not run: the prefix ends before it
			return
		}
		if e := c.w.Unit(u, n, func(r *Round) error {
			if stopped.Load() {
				return cctx.Err()
			}
			return record(c.acc, r)
		}); e != nil {
			fail(u, e)
		}
	}, func(dst, src *chunk) {
		merge(dst.acc, src.acc)
		pool.Put(src.w)
		src.w = nil
	})
	if firstErr != nil && !errors.Is(firstErr, context.Canceled) {
		return zero, 0, firstErr
	}
	done = min(done, stop.Load())
	if firstErr != nil {
		err = firstErr
	}
	return tot.acc, min(done*b, n), err
}
