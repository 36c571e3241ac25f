package samples_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/data/samples"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim/check"
)

func replay(t *testing.T, bug data.Bug, names ...string) *experiments.ReplayReport {
	t.Helper()
	r, err := data.NewReader(bytes.NewReader(samples.CharGram), int64(len(samples.CharGram)), data.ReadOptions{Bug: bug})
	if err != nil {
		t.Fatal(err)
	}
	var rules []experiments.ReplayRule
	for _, n := range names {
		e, err := algos.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := e.Build(nil)
		rules = append(rules, experiments.ReplayRule{Name: n, Algo: a, Greedy: e.Greedy})
	}
	rep, err := experiments.Replay(context.Background(), r, rules, experiments.ReplayConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCharGram replays the embedded sample: 4000 valid steps, the logged
// run and token verification pass the losslessness check, the
// resample-p mutant and the p-raw transform bug (vLLM 9834) fail it.
func TestCharGram(t *testing.T) {
	rep := replay(t, data.BugNone, "token", "exact-match", "mutant-resample-p")
	if rep.Steps != 4000 || rep.V != 48 || rep.MaxGamma != 4 {
		t.Fatalf("steps %d V %d gamma %d", rep.Steps, rep.V, rep.MaxGamma)
	}
	if rep.LoggedLossless.Verdict != check.NotDetected {
		t.Errorf("logged run: %+v", rep.LoggedLossless)
	}
	for i, want := range []string{check.NotDetected, check.NotDetected, "violated"} {
		if got := rep.Rules[i].Lossless.Verdict; got != want {
			t.Errorf("%s: %s (p = %g), want %s", rep.Rules[i].Name, got, rep.Rules[i].Lossless.PValue, want)
		}
	}
	// Real structure: the bigram draft agrees with the 4-gram target on
	// well under all of the mass, but far above chance (1/48).
	if a := rep.MeanAlpha; a < 0.3 || a > 0.7 {
		t.Errorf("mean α = %.3f; the sample's pair should have α in [0.3, 0.7]", a)
	}
	if got := replay(t, data.BugPRaw, "token").Rules[0].Lossless.Verdict; got != "violated" {
		t.Errorf("p-raw bug: %s, want violated", got)
	}
}
