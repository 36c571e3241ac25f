package external

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// ShardReport is what a shard of an external check leaves beside its
// tallies: the implementation's name and protocol (a merge refuses
// shards of different ones) and its components (edge cases, invalid
// outcomes, determinism), which the merge applies.
type ShardReport struct {
	Implementation string     `json:"implementation"`
	Protocol       int        `json:"protocol"`
	Components     Components `json:"components"`
	// Sent is the steps the implementation answered, Elapsed the
	// shard's wall time.
	Sent    int64   `json:"steps"`
	Elapsed float64 `json:"elapsed_seconds"`
}

// RunShard runs cfg.Check's shard (Shard of Shards) of the external check
// on src with its own implementation process, continuing resume's
// finished prefix when it is not nil, and returns the shard's state and
// report. The edge cases and the determinism replay run once the shard's
// trials are done. On a cancellation it returns the finished prefix's
// state with ctx.Err(); Run's errors otherwise.
func RunShard(ctx context.Context, src sim.Source, cfg RunConfig, resume *check.State) (*check.State, ShardReport, error) {
	var sr ShardReport
	p, err := prepare(src, cfg)
	if err != nil {
		return nil, sr, err
	}
	im, err := p.start(ctx)
	if err != nil {
		return nil, sr, err
	}
	defer im.Kill()
	sr.Implementation, sr.Protocol = im.Name(), im.Protocol()
	start := time.Now()
	st, err := check.CheckState(ctx, p.checked, p.rule, p.cfg.Check, resume)
	sr.Elapsed, sr.Sent = time.Since(start).Seconds(), im.Sent()
	if err != nil || st == nil {
		if im.err != nil {
			return nil, sr, im.err
		}
		return st, sr, err
	}
	if sr.Components, err = p.components(im, false); err != nil {
		return nil, sr, err
	}
	if err := im.Close(); err != nil {
		return nil, sr, err
	}
	return st, sr, nil
}

// MergeShards gives the verdict of the shards' states of one external
// check, as Run gives it in one process: check.Merge's result under the
// implementation's name, with every shard's components applied (the edge
// cases' worst verdict; the components of each shard). It starts no
// implementation. The shards' reports must name one implementation and
// protocol.
func MergeShards(ctx context.Context, src sim.Source, cfg RunConfig, states []*check.State, shards []ShardReport) (Report, error) {
	p, err := prepare(src, cfg)
	if err != nil {
		return p.rep, err
	}
	if len(shards) == 0 {
		return p.rep, usage(errors.New("merge: no shard"))
	}
	a := shards[0]
	for _, s := range shards {
		if s.Implementation != a.Implementation || s.Protocol != a.Protocol {
			return p.rep, usage(fmt.Errorf("merge: shards of implementation %q (protocol %d) and %q (protocol %d); merge the shards of one implementation", a.Implementation, a.Protocol, s.Implementation, s.Protocol))
		}
	}
	p.rep.Implementation, p.rep.Algorithm, p.rep.Protocol = a.Implementation, a.Implementation, a.Protocol
	p.setStepper(noSteps{}, a.Implementation)
	res, err := check.Merge(ctx, p.checked, p.rule, p.cfg.Check, states)
	if err != nil {
		return p.rep, err
	}
	rep := p.rep
	rep.Result = res
	for _, s := range shards {
		rep.Elapsed += s.Elapsed
		rep.StepsPerSecond += float64(s.Sent)
	}
	if rep.Elapsed > 0 {
		rep.StepsPerSecond /= rep.Elapsed // steps per second of one shard's process, on average
	}
	mergedComponents(shards).apply(&rep)
	return rep, nil
}

// mergedComponents are the shards' components as one run's: the edge
// cases' verdict of the first shard unless another shard's is worse
// (violated), and every shard's components, each once where shards agree.
func mergedComponents(shards []ShardReport) Components {
	c := Components{Edge: shards[0].Components.Edge, EdgeMsg: shards[0].Components.EdgeMsg, Note: shards[0].Components.Note}
	seen := map[string]bool{}
	for _, s := range shards {
		if s.Components.Edge == check.Violated && c.Edge != check.Violated {
			c.Edge, c.EdgeMsg, c.Note = s.Components.Edge, s.Components.EdgeMsg, s.Components.Note
		}
		for _, comp := range s.Components.List {
			key := comp.Name + "\x00" + comp.Verdict + "\x00" + comp.Detail
			if !seen[key] {
				seen[key] = true
				c.List = append(c.List, comp)
			}
		}
	}
	return c
}

// noSteps stands in for the implementation in a merge, which runs no
// step.
type noSteps struct{}

var errNoSteps = errors.New("a merge runs no step")

func (noSteps) Steps(*rand.Rand, []sim.Block, []sim.Outcome) error         { return errNoSteps }
func (noSteps) TreeSteps(*rand.Rand, []*sim.Tree, []sim.TreeOutcome) error { return errNoSteps }
