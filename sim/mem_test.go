package sim_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestMemBudget: a source above the budget is refused before allocating,
// with a usage error that says how much it needs and how to raise the
// budget. Not parallel: it lowers the package budget.
func TestMemBudget(t *testing.T) {
	_, err := sim.NewSource("dirichlet:V=4194304", 4, 1)
	if !errors.Is(err, sim.ErrMemBudget) {
		t.Fatalf("dirichlet:V=4194304: %v, want ErrMemBudget", err)
	}
	for _, want := range []string{"11.8 GiB", "4.0 GiB", "--mem-budget"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	defer func(b int64) { sim.MemBudget = b }(sim.MemBudget)
	sim.MemBudget = 1 << 20
	if _, err := sim.NewSource("markov:V=64,order=3", 2, 1); !errors.Is(err, sim.ErrMemBudget) {
		t.Errorf("markov:V=64,order=3 under 1 MiB: %v, want ErrMemBudget", err)
	}
	if _, err := sim.NewSource("markov:V=4,order=1", 2, 1); err != nil {
		t.Errorf("markov:V=4,order=1 under 1 MiB: %v", err)
	}
	if _, err := sim.NewSource("zipf:V=1000000000000", 2, 1); err == nil {
		t.Errorf("zipf:V=1e12 accepted")
	}
}

// TestPoolMemNeed: MemNeed is the pool's real allocation within a factor
// 1.5 either way (measured as the bytes allocated while building it).
func TestPoolMemNeed(t *testing.T) {
	for _, kind := range []string{"dirichlet", "temperature", "zipf"} {
		c := sim.PoolConfig{Kind: kind, V: 1 << 14, Gamma: 3, Contexts: 4, A: 0.1, Beta: 0.7, T: 1.5, S: 1.1, SQ: 1.3}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := sim.NewPool(sim.NewRand(1, 2), c); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		got, need := float64(after.TotalAlloc-before.TotalAlloc), float64(c.MemNeed())
		if got > 1.5*need || got < need/1.5 {
			t.Errorf("%s: allocated %.0f B, MemNeed %.0f B", kind, got, need)
		}
	}
}
