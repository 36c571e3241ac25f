package check_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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
// violated. On a model pair the block's rows are the target's after the
// harness's drafts, not after the Stepper's: a check with a law test
// refuses step mode there, and one without judges the emitted tokens
// against the target's rows after the emitted prefix, so this Stepper,
// which verifies its drafts with the harness's rows, is violated.
func TestStepMode(t *testing.T) {
	t.Parallel()
	src := newSource(t, "dirichlet:V=300,contexts=4,seed=2", 3, 1)
	for _, c := range []struct {
		a    sim.Algorithm
		want string
	}{{algos.Token{}, check.NotDetected}, {mustAlgo(t, "mutant-resample-p"), check.Violated}} {
		r, err := check.Check(context.Background(), src, check.Rule{Name: "external", Steps: sampler{c.a}}, check.Config{Trials: 20000, Seed: 3, Workers: 1})
		wantVerdict(t, r, err, c.want, fmt.Sprintf("step mode %T", c.a))
	}
	pair := newSource(t, "markov:V=4", 3, 1)
	if _, err := check.Check(context.Background(), pair, check.Rule{Name: "external", Steps: sampler{algos.Token{}}, Law: algos.Token{}}, check.Config{Gamma: 3, Trials: 100}); err == nil {
		t.Error("step mode with a law test on a model pair accepted")
	}
	r, err := check.Check(context.Background(), pair, check.Rule{Name: "external", Steps: sampler{algos.Token{}}}, check.Config{Gamma: 3, Trials: 20000, Seed: 3, Workers: 1})
	wantVerdict(t, r, err, check.Violated, "step mode on a model pair with the harness's rows")
}

func mustAlgo(t *testing.T, name string) sim.Algorithm {
	t.Helper()
	a, err := algos.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// batchSizes records the size of every Steps call of the Stepper it wraps.
type batchSizes struct {
	s     check.Stepper
	sizes []int
}

func (b *batchSizes) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	b.sizes = append(b.sizes, len(bs))
	return b.s.Steps(rng, bs, outs)
}

// TestBatch: Config.Batch is the size of every Steps call but the last
// (1000 trials in batches of 300: 300, 300, 300, 100).
func TestBatch(t *testing.T) {
	t.Parallel()
	src := newSource(t, "dirichlet:V=50,contexts=4,seed=2", 3, 1)
	st := &batchSizes{s: check.AlgorithmStepper{A: algos.Token{}}}
	r, err := check.Check(context.Background(), src, check.Rule{Name: "token", Steps: st}, check.Config{Trials: 1000, Seed: 3, Workers: 1, Batch: 300})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{300, 300, 300, 100}; r.Trials != 1000 || !slices.Equal(st.sizes, want) {
		t.Errorf("%d trials in batches %v; want 1000 in %v", r.Trials, st.sizes, want)
	}
}

// zeroDraft is a step-mode Stepper that drafts a token of draft
// probability 0 in the first step of each batch, then verifies with the
// token rule.
type zeroDraft struct{}

func (zeroDraft) SamplesDrafts() bool { return true }

func (zeroDraft) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	for i := range bs {
		b := &bs[i]
		for j := range b.Tokens {
			b.Tokens[j] = sim.SampleRow(rng.Float64(), b.Q[j])
		}
		if i == 0 {
			for x := range b.Q[0].Len() {
				if b.Q[0].At(x) == 0 {
					b.Tokens[0] = x
					break
				}
			}
		}
		outs[i] = algos.Token{}.Accept(rng, b)
	}
	return nil
}

// TestStepModeZeroDraft: drafts of draft probability 0 are invalid
// outcomes (verdict violated), not an error.
func TestStepModeZeroDraft(t *testing.T) {
	t.Parallel()
	// One context, γ = 2, V = 4: q puts no mass on token 3.
	p := [][]float32{{0.25, 0.25, 0.25, 0.25}, {0.25, 0.25, 0.25, 0.25}, {0.25, 0.25, 0.25, 0.25}}
	q := [][]float32{{0.4, 0.3, 0.3, 0}, {0.4, 0.3, 0.3, 0}}
	pl, err := sim.PoolFromRows("zero-q", 2, p, q)
	if err != nil {
		t.Fatal(err)
	}
	src := sim.Source{Spec: "zero-q", BlockSource: pl}
	r, err := check.Check(context.Background(), src, check.Rule{Name: "zero-draft", Steps: zeroDraft{}}, check.Config{Trials: 160, Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Invalid != 10 || r.Verdict != check.Violated {
		t.Errorf("verdict %s with %d invalid outcomes; want violated with 10 (one per batch of 16)", r.Verdict, r.Invalid)
	}
}
