package experiments_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// replayLogged writes a log with write and replays it with no rule,
// returning the report of the logged run alone.
func replayLogged(t *testing.T, write func(*data.Writer) error) *experiments.ReplayReport {
	t.Helper()
	var buf bytes.Buffer
	w := data.NewWriter(&buf, data.WriterOptions{Provenance: data.BuildProvenance("test", "synthetic", 1)})
	if err := write(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := data.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := experiments.Replay(context.Background(), r, nil, experiments.ReplayConfig{Seed: 1, Level: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func newSource(t *testing.T, spec string, gamma int) sim.Source {
	t.Helper()
	src, err := source.New(spec, gamma, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// The logged run's PIT test sees every emitted token, not only each step's
// first: a run whose engine draws the bonus token (emitted only when all γ
// drafts are accepted, never first) from the wrong row passes the
// first-token test and is violated by the PIT test, while a
// token-verification run is not detected (fixed seeds; level 0.001).
func TestReplayLoggedPIT(t *testing.T) {
	pair, _ := sim.PairOf(newSource(t, "markov:V=6,order=1,a=0.5,quality=0.9,seed=3", 2))
	markovRun := func(rule sim.Algorithm) *experiments.ReplayReport {
		return replayLogged(t, func(w *data.Writer) error {
			return data.LogRun(context.Background(), w, pair, "p", "q", data.RunConfig{Steps: 3000, Gamma: 2, StepsPerPrompt: 50, Seed: 4,
				Sampling: data.Sampling{Temperature: 1, TopP: 1}, Rule: rule})
		})
	}
	ok := markovRun(algos.Token{})
	if ok.LoggedPIT == nil || ok.LoggedPIT.Verdict != check.NotDetected || ok.LoggedPIT.Positions < 3000 {
		t.Fatalf("token run: %+v; want not_detected over at least 3000 tokens", ok.LoggedPIT)
	}
	e, err := algos.Lookup("mutant-bonus-row")
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := markovRun(a)
	if bad.LoggedLossless.Verdict == check.Violated {
		t.Errorf("bonus-row run: the first-token test says violated (p = %.3g); it cannot see the bonus token", bad.LoggedLossless.PValue)
	}
	if bad.LoggedPIT == nil || bad.LoggedPIT.Verdict != check.Violated {
		t.Fatalf("bonus-row run: PIT %+v; want violated", bad.LoggedPIT)
	}
}

// The pair test pairs successive tokens in the file's order, not within a
// step: a log of one step per prompt (a pool's, as external.Record
// writes) whose pairs were kept only when a step emitted a second token
// selected on the first being accepted, and its pair test rejected a
// correct token verification (p = 2.7e-5 on a NumPy verification's log
// of 10,000 steps). Here the same shape of log, from token verification,
// is not detected by any test.
func TestReplayLoggedPITOneStepPrompts(t *testing.T) {
	src := newSource(t, "dirichlet:V=100,contexts=8", 4)
	pl, _ := sim.PoolOf(src.BlockSource)
	rep := replayLogged(t, func(w *data.Writer) error {
		return data.LogPool(context.Background(), w, pl, data.RunConfig{Steps: 10000, Gamma: 4, StepsPerPrompt: 1, Seed: 1,
			Sampling: data.Sampling{Temperature: 1, TopP: 1}, Rule: algos.Token{}})
	})
	if rep.LoggedPIT == nil || rep.LoggedPIT.Verdict != check.NotDetected {
		t.Fatalf("PIT %+v; want not_detected", rep.LoggedPIT)
	}
	for _, ts := range rep.LoggedPIT.Tests {
		t.Logf("%s: p = %.3g", ts.Name, ts.PValue)
	}
}
