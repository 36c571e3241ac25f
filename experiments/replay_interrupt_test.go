package experiments_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/data/samples"
	"github.com/specsim/specsim/experiments"
)

// A replay cancelled after 5 steps (from its per-step callback) returns
// the report of the steps done, not nil, together with context.Canceled;
// a cancellation inside a step's sampled reps (here 10⁹ of them) stops
// within 1024 reps.
func TestReplayInterruptKeepsSteps(t *testing.T) {
	for _, reps := range []int{1, 1_000_000_000} {
		r, err := data.NewReader(bytes.NewReader(samples.CharGram), int64(len(samples.CharGram)), data.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		steps := 0
		cfg := experiments.ReplayConfig{Seed: 1, Reps: reps, PerStep: func(experiments.StepResult) error {
			if steps++; steps == 5 {
				cancel()
			}
			return nil
		}}
		if reps > 1 {
			time.AfterFunc(50*time.Millisecond, cancel) // within the first step's reps
		}
		rep, err := experiments.Replay(ctx, r, []experiments.ReplayRule{{Name: "token", Algo: algos.Token{}}}, cfg)
		r.Close()
		if !errors.Is(err, context.Canceled) || rep == nil {
			t.Fatalf("reps %d: rep %v, err %v; want a report and context.Canceled", reps, rep != nil, err)
		}
		want := int64(5)
		if reps > 1 {
			want = 1
		}
		if rep.Steps != want || len(rep.Rules) != 1 {
			t.Errorf("reps %d: %d steps, %d rules in the report; want %d steps, 1 rule", reps, rep.Steps, len(rep.Rules), want)
		}
		cancel()
	}
}
