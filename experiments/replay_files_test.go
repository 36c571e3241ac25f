package experiments

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/fsutil"
)

// TestReplayStepsOutNotTheLog (issue 12): replay --log X --steps-out X is
// refused before anything is written, and X stays byte-identical.
func TestReplayStepsOutNotTheLog(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "run.parquet")
	_, err := data.LogSynthetic(context.Background(), data.SyntheticOptions{Source: "markov:V=4,order=1", Out: p,
		Run: data.RunConfig{Steps: 20, Gamma: 2, StepsPerPrompt: 10, Seed: 1, RunID: "r", Sampling: data.Sampling{Temperature: 1, TopP: 1}, Rule: algos.Token{}}})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	_, err = ReplayLog(context.Background(), ReplayOptions{Log: p, StepsOut: p, Seed: 1, Reps: 1, Level: 0.01})
	if !errors.Is(err, fsutil.ErrOutputIsInput) || !errors.Is(err, ErrBadInput) {
		t.Errorf("--steps-out equal to --log: %v, want ErrOutputIsInput and ErrBadInput", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Errorf("the log changed")
	}
}
