package run

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/specsim/specsim/sim"
)

// Bench times chain rule a on pool pl for cfg.Duration on cfg.Workers
// goroutines: each worker cycles through the contexts (and through
// sim.BenchDrafts drafts per context drawn before timing from the stream
// ("bench/drafts")), so the rows come from memory rather than cache. The
// rounds go through a Worker like every other loop; worker w's coins come
// from one stream ("bench/rule", w).
func Bench(ctx context.Context, pl *sim.Pool, a sim.Algorithm, cfg sim.BenchConfig) (sim.BenchResult, error) {
	if cfg.Duration <= 0 {
		return sim.BenchResult{}, fmt.Errorf("bench: duration %v; time at least a moment", cfg.Duration)
	}
	workers := max(cfg.Workers, 1)
	if err := cfg.Check(); err != nil {
		return sim.BenchResult{}, err
	}
	defer sim.BeginTiming()() // the rules compute what an engine would
	tokens := benchTokens(pl, cfg.Seed)
	parts := make([]benchPart, workers)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	// stop is set when ctx is cancelled and read before every step, so
	// even thousands of workers on a few cores stop within milliseconds.
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[w], errs[w] = benchWorker(&stop, w, pl, tokens, a, cfg)
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	runtime.ReadMemStats(&ms1)
	for _, err := range errs {
		if err != nil {
			return sim.BenchResult{}, err
		}
	}
	return benchResult(pl, parts, el, ms1.Mallocs-ms0.Mallocs), ctx.Err()
}

// benchPart is one bench worker's count of steps and emitted tokens and
// its thread's CPU time.
type benchPart struct {
	steps, emitted int64
	cpu            time.Duration
}

// benchTokens draws the sim.BenchDrafts drafts of every context of pl,
// in context order, from the stream ("bench/drafts").
func benchTokens(pl *sim.Pool, seed uint64) []int {
	g, nd := pl.Gamma, sim.BenchDrafts
	tokens := make([]int, pl.Contexts*nd*g)
	rd := sim.NewRand(seed, sim.StreamID("bench/drafts"))
	var tmp sim.Block
	for c := 0; c < pl.Contexts; c++ {
		for d := 0; d < nd; d++ {
			pl.Fill(rd, c, &tmp)
			copy(tokens[(c*nd+d)*g:], tmp.Tokens)
		}
	}
	return tokens
}

// benchWorker is bench worker w: on its own locked thread it verifies
// the cycled drafts from context w with coins from ("bench/rule", w)
// until cfg.Duration has passed or stop is set.
func benchWorker(stop *atomic.Bool, w int, pl *sim.Pool, tokens []int, a sim.Algorithm, cfg sim.BenchConfig) (benchPart, error) {
	// the worker's own thread, whose CPU time it reports
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := ThreadCPU()
	cy := &cycled{pl: pl, tokens: tokens, c: w % pl.Contexts}
	l := &Loop{Seed: cfg.Seed, Keys: Named("bench"), Chains: cy, Verifiers: []Verifier{Chain(a)}}
	wk, err := l.NewWorker()
	if err != nil {
		return benchPart{}, err
	}
	s := Shared(sim.NewRand(cfg.Seed, sim.StreamID("bench/rule", uint64(w))))
	deadline := time.Now().Add(cfg.Duration)
	var steps, emitted int64
	// the clock is read after every batch of steps; a batch starts at one
	// step and doubles up to 256 while it takes under a millisecond, so a
	// slow rule (milliseconds a step) overruns the duration by one step,
	// not by 256
	batch := 1
	for !stop.Load() {
		t0 := time.Now()
		for j := 0; j < batch && !stop.Load(); j++ {
			r, err := wk.Round(s, steps)
			if err != nil {
				return benchPart{}, err
			}
			emitted += int64(r.Outcome().Emitted())
			steps++
		}
		now := time.Now()
		if now.After(deadline) {
			break
		}
		if batch < 256 && now.Sub(t0) < time.Millisecond {
			batch *= 2
		}
	}
	return benchPart{steps, emitted, ThreadCPU() - cpu0}, nil
}

// benchResult assembles the workers' parts, the elapsed seconds and the
// allocations counted during the run.
func benchResult(pl *sim.Pool, parts []benchPart, el float64, mallocs uint64) sim.BenchResult {
	r := sim.BenchResult{Seconds: el, Contexts: pl.Contexts, MeanBeta: pl.MeanBeta,
		PoolBytes: int64(len(pl.P)+len(pl.Q)) * int64(pl.V) * 4}
	var em int64
	for _, p := range parts {
		r.Steps += p.steps
		em += p.emitted
		r.CPUSeconds += p.cpu.Seconds()
	}
	if r.Steps > 0 {
		r.StepsPerSecond = float64(r.Steps) / el
		r.MeanEmitted = float64(em) / float64(r.Steps)
		r.AllocsPerStep = float64(mallocs) / float64(r.Steps)
	}
	return r
}

// cycled is the benchmark's drafter: the pre-drawn drafts of each context
// in turn, the rows pointed at in the pool (no copy, no randomness).
type cycled struct {
	pl     *sim.Pool
	tokens []int
	c, d   int
}

func (cy *cycled) DraftChain(_ *Round, b *sim.Block) error {
	pl, g, c := cy.pl, cy.pl.Gamma, cy.c
	if cap(b.Q) < g {
		b.Q, b.P = make([]sim.Row, g), make([]sim.Row, g+1)
	}
	b.Q, b.P = b.Q[:g], b.P[:g+1]
	for i := 0; i < g; i++ {
		b.Q[i] = sim.F32(pl.QRow(c, i))
	}
	for i := 0; i <= g; i++ {
		b.P[i] = sim.F32(pl.PRow(c, i))
	}
	b.Ctx = c
	k := (c*sim.BenchDrafts + cy.d) * g
	b.Tokens = cy.tokens[k : k+g]
	if cy.c++; cy.c == pl.Contexts {
		cy.c, cy.d = 0, (cy.d+1)%sim.BenchDrafts
	}
	return nil
}
