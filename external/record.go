package external

import (
	"context"
	"fmt"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// Record runs s on steps trials of pool pl (trial t: context t mod
// contexts, drafts from the keyed stream ("check/draft", t), batches of
// batch steps, as Pool does) and writes every step to w as a logged step
// (probability rows, the drafts, the emitted tokens), so that
// 'simulate replay' judges the implementation's own emitted tokens in its
// "logged" block. It is the in-process stand-in for what an engine that
// cannot be called from Python writes itself (see data.Step); tests use it
// to show that the logged block catches the same planted bugs.
func Record(ctx context.Context, pl *sim.Pool, s check.Stepper, w *data.Writer, steps int64, batch int, seed uint64, runID string) error {
	cfg := CheckConfig{Config: check.Config{Gamma: pl.Gamma, Trials: steps, Seed: seed}, Batch: batch}
	if err := cfg.defaults(); err != nil {
		return err
	}
	nc := int64(pl.Contexts)
	bs := make([]sim.Block, cfg.Batch)
	outs := make([]sim.Outcome, cfg.Batch)
	st := sim.NewStream()
	fill := func(t int64, i int) {
		pl.Fill(st.Reset(seed, sim.StreamID("check/draft", uint64(t))), int(t%nc), &bs[i])
		bs[i].Ctx = int(t % nc)
	}
	tally := func(t int64, i int) error {
		c, b := int(t%nc), &bs[i]
		step := data.Step{RunID: runID, PromptID: t, Kind: data.KindProbs, Tokens: b.Tokens,
			Emitted: emittedSeq(nil, b, outs[i], pl.V), Sampling: data.Sampling{Temperature: 1, TopP: 1}}
		for j := 0; j < pl.Gamma; j++ {
			step.Q = append(step.Q, pl.QRow(c, j))
		}
		for j := 0; j <= pl.Gamma; j++ {
			step.P = append(step.P, pl.PRow(c, j))
		}
		if err := w.Write(&step); err != nil {
			return fmt.Errorf("record: step %d: %w", t, err)
		}
		return nil
	}
	_, err := batches(ctx, s, cfg, bs, outs, fill, tally)
	return err
}
