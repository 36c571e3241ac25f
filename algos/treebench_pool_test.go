package algos

import (
	"slices"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// TestBenchTreePoolShared: the tree bench builds a configuration's pool
// once among its last few and a new one for another seed or size, with
// the same rows as a pool built afresh.
func TestBenchTreePoolShared(t *testing.T) {
	cfg := TreeBenchConfig{V: 64, K: 2, Depth: 2, Trees: 3, Beta: 0.7, Seed: 11}
	a, err := benchTreePool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := benchTreePool(cfg)
	cfg.Seed = 12
	c, _ := benchTreePool(cfg)
	cfg.Seed, cfg.V = 11, 65
	d, _ := benchTreePool(cfg)
	if a != b || a == c || a == d {
		t.Errorf("pools: same configuration shared %v, another seed shared %v, another V shared %v", a == b, a == c, a == d)
	}
	cfg.V = 64
	fresh, err := source.Dirichlet{Shape: source.Shape{V: 64, Gamma: 2, Contexts: 3}, A: 0.1, Beta: 0.7}.Pool(sim.NewRand(11, sim.StreamID("treebench/pool")))
	if err != nil {
		t.Fatal(err)
	}
	for i := range fresh.Q {
		if !slices.Equal(fresh.Q[i], a.Q[i]) {
			t.Fatalf("draft row %d differs from a pool built afresh", i)
		}
	}
}
