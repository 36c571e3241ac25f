package external

import (
	"context"
	"fmt"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/run"
)

// Record runs s on steps trials of pool pl (trial t: context t mod
// contexts; batch u of batch steps draws its drafts from the stream of
// role draft and hands s the stream of role coins of run.Named("record")) and
// writes every step to w as a logged step (probability rows, the drafts,
// the emitted tokens), so that 'simulate replay' judges the
// implementation's own emitted tokens in its "logged" block. It is the
// in-process stand-in for what an engine that cannot be called from
// Python writes itself (see data.Step); tests use it to show that the
// logged block catches the same planted bugs.
func Record(ctx context.Context, pl *sim.Pool, s check.Stepper, w *data.Writer, steps int64, batch int, seed uint64, runID string) error {
	if steps < 1 || batch < 1 {
		return fmt.Errorf("record: %d steps in batches of %d; use at least 1 of each", steps, batch)
	}
	l := &run.Loop{Seed: seed, Keys: run.Named("record"), Batch: batch, Chains: run.Cycle(pl), Verifiers: []run.Verifier{run.Batch(s)}}
	wk, err := l.NewWorker()
	if err != nil {
		return err
	}
	write := func(r *run.Round) error {
		t, b, o := r.Trial, r.Block, r.Outcome()
		c := b.Ctx
		emitted := append([]int(nil), b.Tokens[:min(max(o.Accepted, 0), pl.Gamma)]...)
		if o.Next != sim.NoToken {
			emitted = append(emitted, o.Next)
		}
		step := data.Step{RunID: runID, PromptID: t, Kind: data.KindProbs, Tokens: b.Tokens,
			Emitted: emitted, Sampling: data.Sampling{Temperature: 1, TopP: 1}}
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
	units := (steps + int64(batch) - 1) / int64(batch)
	for u := int64(0); u < units; u++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := wk.Unit(u, steps, write); err != nil {
			return err
		}
	}
	return nil
}
