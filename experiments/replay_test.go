package experiments_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/data/samples"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim"
)

// failingLaw is token verification whose law reports an empty residual
// from row 3 on: the data condition a law returns instead of panicking.
type failingLaw struct{ calls *int }

func (f failingLaw) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	return algos.Token{}.Accept(rng, b)
}

func (f failingLaw) Law(b *sim.Block, dst *sim.Law) error {
	if *f.calls++; *f.calls > 3 {
		return sim.ErrEmptyResidual
	}
	return algos.Token{}.Law(b, dst)
}

// TestReplayLawError: a rule whose law fails on a step stops the replay
// with an error naming the rule and the file row (no recover involved).
func TestReplayLawError(t *testing.T) {
	r, err := data.NewReader(bytes.NewReader(samples.CharGram), int64(len(samples.CharGram)), data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	calls := 0
	_, err = experiments.Replay(context.Background(), r, []experiments.ReplayRule{{Name: "failing", Algo: failingLaw{&calls}}},
		experiments.ReplayConfig{Seed: 1, MaxSteps: 10})
	if !errors.Is(err, sim.ErrEmptyResidual) || !strings.Contains(err.Error(), "rule failing on row 3") {
		t.Fatalf("got %v, want an ErrEmptyResidual naming rule failing on row 3", err)
	}
}

// TestReplayOptionsValidate: bad options wrap ErrBadInput before any file
// is opened.
func TestReplayOptionsValidate(t *testing.T) {
	for _, o := range []experiments.ReplayOptions{
		{Bug: "nope", Reps: 1, Level: 0.01, Algos: []string{"token"}},
		{Bug: "none", Reps: 0, Level: 0.01, Algos: []string{"token"}},
		{Bug: "none", Reps: 1, Level: 1, Algos: []string{"token"}},
		{Bug: "none", Reps: 1, Level: 0.01, Algos: []string{"no-such-rule"}},
	} {
		if err := o.Validate(); !errors.Is(err, experiments.ErrBadInput) {
			t.Errorf("%+v: got %v, want ErrBadInput", o, err)
		}
	}
	if err := (experiments.ReplayOptions{Bug: "none", Reps: 1, Level: 0.01, Algos: []string{"token", " block"}}).Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
}
