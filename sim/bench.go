package sim

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// BenchConfig describes the benchmark workload shared with the peer
// measurements quoted in the issues: per position p ~ Dirichlet(0.1) over
// V, q = norm(p·exp(σ N(0,1))) with σ calibrated so the mean Σmin(p,q) is
// Beta, float32 rows, a pool of at least PoolBytes cycled so that rows come
// from memory rather than cache, and drafts x_i ~ q_i drawn before timing.
type BenchConfig struct {
	V, Gamma int
	Beta     float64
	// PoolBytes is the least size of the pool's rows (default 128 MiB).
	PoolBytes int
	// Duration is the timed period per worker.
	Duration time.Duration
	Workers  int
	Seed     uint64
}

// BenchResult reports a benchmark.
type BenchResult struct {
	Steps          int64
	Seconds        float64
	StepsPerSecond float64
	MeanEmitted    float64
	AllocsPerStep  float64
	PoolBytes      int64
	Contexts       int
	MeanBeta       float64
}

// drafts pre-drawn per context, cycled during the timed loop.
const benchDrafts = 64

// Check refuses more than MaxBenchWorkersPerCPU workers per core (Bench
// and sim/source's BenchPool call it; a command may call it before
// announcing the build).
func (cfg BenchConfig) Check() error {
	if lim := MaxBenchWorkersPerCPU * runtime.GOMAXPROCS(0); cfg.Workers > lim {
		return fmt.Errorf("bench: workers = %d; use 1 to %d (%d per core): more runnable workers than that time the scheduler, not the rule, and delay a Ctrl-C by seconds", cfg.Workers, lim, MaxBenchWorkersPerCPU)
	}
	return nil
}

// MaxBenchWorkersPerCPU bounds Bench's workers per core (GOMAXPROCS): with
// thousands of spinning workers on two cores the goroutine that delivers
// SIGINT waits tens of seconds for a turn.
const MaxBenchWorkersPerCPU = 4

// Bench times a on pool: each worker cycles through the contexts (and
// through benchDrafts pre-drawn drafts per context) for cfg.Duration. The
// rule's coins come from one keyed stream per worker.
func Bench(ctx context.Context, pl *Pool, a Algorithm, cfg BenchConfig) (BenchResult, error) {
	if cfg.Duration <= 0 {
		return BenchResult{}, fmt.Errorf("bench: duration %v; time at least a moment", cfg.Duration)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 1
	}
	if err := cfg.Check(); err != nil {
		return BenchResult{}, err
	}
	g := pl.Gamma
	tokens := make([]int, pl.Contexts*benchDrafts*g)
	rd := NewRand(cfg.Seed, StreamID("bench/drafts"))
	for c := 0; c < pl.Contexts; c++ {
		for d := 0; d < benchDrafts; d++ {
			for i := 0; i < g; i++ {
				tokens[(c*benchDrafts+d)*g+i] = pl.draftAlias[c*g+i].Sample(rd)
			}
		}
	}
	type part struct{ steps, emitted int64 }
	parts := make([]part, workers)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	// stop is set when ctx is cancelled and read before every step, so
	// even thousands of workers on a few cores stop within milliseconds.
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := NewRand(cfg.Seed, StreamID("bench/rule", uint64(w)))
			b := Block{Q: make([]Row, g), P: make([]Row, g+1), Ctx: -1}
			deadline := time.Now().Add(cfg.Duration)
			var steps, emitted int64
			c, d := w%pl.Contexts, 0
			for !stop.Load() {
				for j := 0; j < 256 && !stop.Load(); j++ {
					for i := 0; i < g; i++ {
						b.Q[i] = F32(pl.QRow(c, i))
					}
					for i := 0; i <= g; i++ {
						b.P[i] = F32(pl.PRow(c, i))
					}
					b.Ctx = c
					k := (c*benchDrafts + d) * g
					b.Tokens = tokens[k : k+g]
					o := a.Accept(rng, &b)
					emitted += int64(o.Emitted())
					steps++
					if c++; c == pl.Contexts {
						c, d = 0, (d+1)%benchDrafts
					}
				}
				if time.Now().After(deadline) {
					break
				}
			}
			parts[w] = part{steps, emitted}
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	runtime.ReadMemStats(&ms1)
	r := BenchResult{Seconds: el, Contexts: pl.Contexts, MeanBeta: pl.MeanBeta,
		PoolBytes: int64(len(pl.P)+len(pl.Q)) * int64(pl.V) * 4}
	var em int64
	for _, p := range parts {
		r.Steps += p.steps
		em += p.emitted
	}
	if r.Steps > 0 {
		r.StepsPerSecond = float64(r.Steps) / el
		r.MeanEmitted = float64(em) / float64(r.Steps)
		r.AllocsPerStep = float64(ms1.Mallocs-ms0.Mallocs) / float64(r.Steps)
	}
	return r, ctx.Err()
}
