package source_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// TestMemBudget: a source above the budget is refused before allocating,
// with a usage error that says how much it needs and how to raise the
// budget; the budget is the caller's (0 is sim.DefaultMemBudget), and
// Check refuses exactly what New refuses.
func TestMemBudget(t *testing.T) {
	t.Parallel()
	_, err := source.New("dirichlet:V=4194304", 4, 1, 0)
	if !errors.Is(err, sim.ErrMemBudget) {
		t.Fatalf("dirichlet:V=4194304: %v, want ErrMemBudget", err)
	}
	for _, want := range []string{"11.8 GiB", "4.0 GiB", "--mem-budget"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if err := source.Check("dirichlet:V=4194304", 4, 12<<30); err != nil {
		t.Errorf("dirichlet:V=4194304 under a 12 GiB budget: %v", err)
	}
	const mib = 1 << 20
	for _, c := range []struct {
		spec   string
		budget int64
		refuse bool
	}{
		{"markov:V=16,order=3", mib, true}, // 17³ states × 16 × 16 B = 1.2 MiB
		{"markov:V=16,order=3", 0, false},
		{"markov:V=4,order=1", mib, false},
		{"zipf:V=10000,contexts=2", mib, true}, // V × (6 rows × 20 B + 4 × 24 B) = 2.1 MiB
		{"zipf:V=1000,contexts=2", mib, false}, // 211 KiB
		{"temperature:V=100,contexts=1", mib, false},
	} {
		cerr := source.Check(c.spec, 2, c.budget)
		_, err := source.New(c.spec, 2, 1, c.budget)
		if errors.Is(err, sim.ErrMemBudget) != c.refuse || errors.Is(cerr, sim.ErrMemBudget) != c.refuse {
			t.Errorf("%s under %d B: New %v, Check %v; want refused = %v", c.spec, c.budget, err, cerr, c.refuse)
		}
	}
	if _, err := source.New("zipf:V=1000000000000", 2, 1, 0); err == nil {
		t.Errorf("zipf:V=1e12 accepted")
	}
}

// TestPoolMemNeed: MemNeed is the pool's real allocation within a factor
// 1.5 either way (measured as the bytes allocated while building it). Not
// parallel: it reads the process's allocation counters.
func TestPoolMemNeed(t *testing.T) {
	shape := source.Shape{V: 1 << 14, Gamma: 3, Contexts: 4}
	for _, c := range []interface {
		MemNeed() int64
		source.Config
	}{
		source.Dirichlet{Shape: shape, A: 0.1, Beta: 0.7},
		source.Temperature{Shape: shape, A: 0.1, T: 1.5},
		source.Zipf{Shape: shape, S: 1.1, SQ: 1.3},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := c.Build(sim.NewRand(1, 2)); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		got, need := float64(after.TotalAlloc-before.TotalAlloc), float64(c.MemNeed())
		if got > 1.5*need || got < need/1.5 {
			t.Errorf("%T: allocated %.0f B, MemNeed %.0f B", c, got, need)
		}
	}
}
