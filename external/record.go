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

// RecordTrees is Record in tree mode: it runs verifier v on steps trees
// drafted by td (trial t in batch u of batch trees draws its tree from the
// stream of role draft and v's coins from the stream of role coins of unit
// u of run.Named("record-tree")) and writes every step to w as a tree step
// (data.TreeStep: the tree's nodes with their probability rows, the
// accepted path and the emitted tokens), so that 'simulate replay' judges
// the tree implementation's own emitted tokens. v is run.BatchTree(im) for
// an implementation in tree mode, or run.Tree(a) for an in-process tree
// rule. An invalid outcome (a path that leaves the tree) stops the
// recording with an error naming the step: a logged path follows its
// tree.
func RecordTrees(ctx context.Context, td run.TreeDrafter, v run.Verifier, w *data.TreeWriter, steps int64, batch int, seed uint64, runID string) error {
	if steps < 1 || batch < 1 {
		return fmt.Errorf("record: %d steps in batches of %d; use at least 1 of each", steps, batch)
	}
	l := &run.Loop{Seed: seed, Keys: run.Named("record-tree"), Batch: batch, Trees: td, Verifiers: []run.Verifier{v}}
	wk, err := l.NewWorker()
	if err != nil {
		return err
	}
	var st data.TreeStep
	write := func(r *run.Round) error {
		o := r.TreeOutcome()
		if o.Node < 0 {
			return fmt.Errorf("record: step %d: the implementation returned an invalid outcome (a path that leaves its tree); a logged path follows its tree, so this run cannot be logged", r.Trial)
		}
		st.FromTree(r.Tree, o)
		st.RunID, st.PromptID, st.Sampling = runID, r.Trial, data.Sampling{Temperature: 1, TopP: 1}
		if err := w.Write(&st); err != nil {
			return fmt.Errorf("record: step %d: %w", r.Trial, err)
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
