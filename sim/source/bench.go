package source

import (
	"context"
	"fmt"

	"github.com/specsim/specsim/sim"
)

// benchCalibrationTokens is the draft tokens (rows × V) whose mean
// Σmin(p, q) calibrates a bench pool's σ (Dirichlet.CalibrationRows):
// 2^20, 32 rows at V = 32,000 and 1,048 at V = 1,000.
const benchCalibrationTokens = 1 << 20

// BenchPool builds the pool of the benchmark workload cfg describes (see
// sim.BenchConfig): a dirichlet pool with a = 0.1 and beta = cfg.Beta of
// at least cfg.PoolBytes of rows, drawn from the stream "bench/pool",
// within budget bytes (0: sim.DefaultMemBudget). It checks the worker
// count first, so a bad one is refused before the build, and returns
// ctx.Err() as soon as ctx is cancelled: the build (seconds for the
// default 128 MiB) runs on its own goroutine, which is abandoned and
// finishes in the background; the caller is expected to give up (a
// command exits). Its σ is calibrated on the first
// benchCalibrationTokens/V draft rows, and its MeanBeta is the mean over
// every row.
func BenchPool(ctx context.Context, cfg sim.BenchConfig, budget int64) (*sim.Pool, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.PoolBytes == 0 {
		cfg.PoolBytes = 128 << 20
	}
	perCtx := (2*cfg.Gamma + 1) * cfg.V * 4
	if perCtx <= 0 {
		return nil, fmt.Errorf("bench: V = %d and gamma = %d give an empty pool", cfg.V, cfg.Gamma)
	}
	ctxs := max(1, (cfg.PoolBytes+perCtx-1)/perCtx)
	c := Dirichlet{Shape: Shape{V: cfg.V, Gamma: cfg.Gamma, Contexts: ctxs, MemBudget: budget}, A: 0.1, Beta: cfg.Beta,
		CalibrationRows: max(1, benchCalibrationTokens/cfg.V)}
	type built struct {
		pl  *sim.Pool
		err error
	}
	ch := make(chan built, 1)
	go func() {
		pl, err := c.Pool(sim.NewRand(cfg.Seed, sim.StreamID("bench/pool")))
		ch <- built{pl, err}
	}()
	select {
	case b := <-ch:
		return b.pl, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
