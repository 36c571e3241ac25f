package sim

import (
	"fmt"
	"runtime"
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
	Steps   int64
	Seconds float64
	// CPUSeconds is the CPU time (user and system) of the workers' own
	// threads over the timed period, summed, on Linux; 0 elsewhere.
	// Against Seconds it shows whether the workers had their cores: on a
	// shared machine the wall time grows, the CPU time per step does not.
	CPUSeconds     float64
	StepsPerSecond float64
	MeanEmitted    float64
	AllocsPerStep  float64
	PoolBytes      int64
	Contexts       int
	MeanBeta       float64
}

// BenchDrafts is the number of drafts pre-drawn per context and cycled
// during a timed benchmark.
const BenchDrafts = 64

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
