package check_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// sampler is a Stepper in step mode: it draws its own drafts from the rows
// the harness chose, then verifies them with a (the way an external engine
// that drafts and verifies in one call would).
type sampler struct{ a sim.Algorithm }

func (s sampler) SamplesDrafts() bool { return true }

func (s sampler) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	for i := range bs {
		b := &bs[i]
		for j := range b.Tokens {
			b.Tokens[j] = sim.SampleRow(rng.Float64(), b.Q[j])
		}
		outs[i] = s.a.Accept(rng, b)
	}
	return nil
}

// TestStepMode: a step-mode Stepper running token verification on its own
// drafts is preserved on a pool, one running the resample-p mutant is
// violated, and a model pair refuses step mode (its draft rows depend on
// the drafted prefix).
func TestStepMode(t *testing.T) {
	t.Parallel()
	src, err := sim.NewSource("dirichlet:V=300,contexts=4,seed=2", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a    sim.Algorithm
		want string
	}{{algos.Token{}, check.Preserved}, {mustAlgo(t, "mutant-resample-p"), check.Violated}} {
		r, err := check.Check(context.Background(), src, check.Rule{Name: "external", Steps: sampler{c.a}}, check.Config{Trials: 20000, Seed: 3, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != c.want {
			t.Errorf("step mode %T: verdict %s (p = %.3g), want %s", c.a, r.Verdict, r.PValue, c.want)
		}
	}
	pair, err := sim.NewSource("markov:V=4", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := check.Check(context.Background(), pair, check.Rule{Name: "external", Steps: sampler{algos.Token{}}}, check.Config{Gamma: 3, Trials: 100}); err == nil {
		t.Error("step mode on a model pair accepted")
	}
}

func mustAlgo(t *testing.T, name string) sim.Algorithm {
	t.Helper()
	a, err := algos.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
