package experiments

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/seq"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/stattest"
)

// ReplayTree judges the logged run of a tree log (data.TreeReader, from
// its current position) with the tests Replay applies to a chain log's
// logged run. A lossless tree rule emits, at each position of its path
// and at the extra token, a token whose law given the emitted prefix is
// the processed target row of the node reached (the row after that
// prefix), so:
//
//   - the first emitted token of each step is checked by the binned
//     losslessness test (check.Binned, ratio cells of the root's p and q;
//     a root without a draft row has one cell);
//   - every emitted token is tested by its randomised PIT under the target
//     row of its node (seq.Tally: pit, pit-index, pit-q against the node's
//     draft row or, where it has none, its target row; the pair test of
//     successive tokens in the file's order), the randomisation of file
//     row k coming from unit k of run.Named("replay-pit"), as for chains.
//
// Positions holds α, TV and KL(p‖q) per depth: position d averages over
// the nodes at depth d-1 that have a draft row (its Steps counts those
// nodes). MaxGamma is the deepest tree. Rules are not replayed (Rules is
// empty): a tree log is judged by its logged run. It stops with
// ctx.Err() and the report so far when ctx is cancelled, and with the
// reader's error on a bad step.
func ReplayTree(ctx context.Context, r *data.TreeReader, cfg ReplayConfig) (*ReplayReport, error) {
	if cfg.Level <= 0 {
		cfg.Level = 0.001
	}
	rep := &ReplayReport{}
	a := &treeAcc{cells: check.NewRatioBinned(), pit: run.NewStreams(cfg.Seed, run.Named("replay-pit")),
		probs: make([]float64, len(check.RatioEdges)+2), div: !cfg.SkipDivergences}
	interrupted := false
	for r.Next() {
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		if cfg.MaxSteps > 0 && rep.Steps >= cfg.MaxSteps {
			break
		}
		rep.Steps++
		rep.V = int(r.Raw().VocabSize)
		rep.MaxGamma = max(rep.MaxGamma, int(r.Raw().Gamma))
		a.divergences(r)
		a.emitted(r, rep.V)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	rep.Positions = positionStats(a.pos, cfg.SkipDivergences)
	rep.MeanAlpha = a.alpha.Summary(0.95).Mean
	ls := a.logged.Summary(0.95)
	rep.LoggedSteps, rep.LoggedMeanEmitted, rep.LoggedCI95 = ls.N, ls.Mean, [2]float64{ls.Lo, ls.Hi}
	rep.LoggedLossless = a.cells.Test(cfg.Level)
	if a.tally != nil {
		vd := a.tally.Verdict(cfg.Level, check.DefaultPower)
		rep.LoggedPIT = &vd
	}
	if interrupted {
		return rep, ctx.Err()
	}
	return rep, nil
}

// treeAcc accumulates ReplayTree's tests over the steps of a tree log.
type treeAcc struct {
	logged, alpha stattest.Moments
	cells         *check.Binned
	tally         *seq.Tally
	pit           *run.Streams
	pos           []posAcc
	probs         []float64
	p64, q64      []float64
	depth         []int
	div           bool
}

// divergences accounts α (and TV and KL when div is set) of every node
// of the current step that has a draft row, by depth.
func (a *treeAcc) divergences(r *data.TreeReader) {
	st := r.Step()
	a.depth = append(a.depth[:0], 0)
	for n := 1; n < st.Nodes(); n++ {
		a.depth = append(a.depth, a.depth[st.Parent[n]]+1)
	}
	for n := range st.Nodes() {
		q := r.ProcQ(n)
		if q == nil {
			continue
		}
		for len(a.pos) <= a.depth[n] {
			a.pos = append(a.pos, posAcc{})
		}
		a.p64, a.q64 = sim.Float64s(a.p64, r.ProcP(n)), sim.Float64s(a.q64, q)
		a.alpha.Add(a.pos[a.depth[n]].add(a.p64, a.q64, a.div))
	}
}

// emitted tests the current step's emitted tokens over a vocabulary of v
// tokens: the first in the binned check of the root's ratio cells, every
// one by its PIT under the target row of the node it was drawn at (the
// root, then the path's nodes), with the randomisation of the step's
// file row.
func (a *treeAcc) emitted(r *data.TreeReader, v int) {
	st := r.Step()
	p1, q1 := sim.F32(r.ProcP(0)), sim.F32(r.ProcP(0))
	if q := r.ProcQ(0); q != nil {
		q1 = sim.F32(q)
	}
	check.RatioCells(a.probs, p1, q1)
	a.logged.Add(float64(len(st.Emitted)))
	a.cells.Add(a.probs, check.RatioCell(p1, q1, st.Emitted[0]))
	if a.tally == nil {
		a.tally = seq.NewTally(v, false)
	}
	a.pit.Reset(uint64(r.Row()))
	rng := a.pit.Rand(run.Coins)
	for k, x := range st.Emitted {
		n := 0 // the node whose row the k-th token was drawn from
		if k > 0 {
			n = st.Path[k-1]
		}
		a.p64 = sim.Float64s(a.p64, r.ProcP(n))
		a.q64 = append(a.q64[:0], a.p64...) // no draft row: the target's order
		if q := r.ProcQ(n); q != nil {
			a.q64 = sim.Float64s(a.q64, q)
		}
		a.tally.Add(rng.Float64(), a.p64, a.q64, x)
	}
}

// posAcc accumulates the divergences of one draft position (chain) or
// depth (tree).
type posAcc struct {
	n, inf        int64
	alpha, tv, kl float64
}

// add accounts one (p, q) pair and returns its α; TV and KL are computed
// when div is set.
func (pa *posAcc) add(p, q []float64, div bool) float64 {
	a, tv, kl := sim.Alpha(p, q), 0.0, 0.0
	if div {
		tv, kl = sim.TV(p, q), sim.KL(p, q)
	}
	pa.n++
	pa.alpha += a
	pa.tv += tv
	if math.IsInf(kl, 1) {
		pa.inf++
	} else {
		pa.kl += kl
	}
	return a
}

// positionStats summarises the accumulated positions (TV and KL NaN when
// skipped).
func positionStats(pos []posAcc, skipped bool) []PositionStats {
	var out []PositionStats
	for i, pa := range pos {
		ps := PositionStats{Position: i + 1, Steps: pa.n, KLInfinite: pa.inf}
		if pa.n > 0 {
			ps.MeanAlpha, ps.MeanTV = pa.alpha/float64(pa.n), pa.tv/float64(pa.n)
		}
		if pa.n > pa.inf {
			ps.MeanKL = pa.kl / float64(pa.n-pa.inf)
		}
		if skipped {
			ps.MeanTV, ps.MeanKL = math.NaN(), math.NaN()
		}
		out = append(out, ps)
	}
	return out
}

// replayTreeLog is ReplayLog on a tree log: the options that concern
// rules (an --algo the user chose, --reps above 1, --steps-out) or chain
// logs (--bug) are refused with ErrBadInput, the log is judged by
// ReplayTree, and FailOnViolation fails when the logged run's first-token
// or every-token test is violated.
func replayTreeLog(ctx context.Context, opt ReplayOptions) (*ReplayOutput, error) {
	const why = "a tree log (schema version 2) is judged by its logged run; no rule is replayed over logged trees"
	switch {
	case opt.Bug != "" && opt.Bug != "none":
		return nil, fmt.Errorf("%w: %w", ErrBadInput, diag.Param("bug", " %s plants a p/q bug in chain logs; %s: leave it out", opt.Bug, why))
	case len(opt.Algos) > 0 && !opt.AlgosDefault:
		return nil, fmt.Errorf("%w: %w", ErrBadInput, diag.Param("algo", " %s: %s: leave it out", strings.Join(opt.Algos, ","), why))
	case opt.Reps != 1:
		return nil, fmt.Errorf("%w: %w", ErrBadInput, diag.Param("reps", " = %d samples rules' outcomes; %s: leave it out", opt.Reps, why))
	case opt.StepsOut != "":
		return nil, fmt.Errorf("%w: %w", ErrBadInput, diag.Param("steps-out", " writes rules' per-step values; %s: leave it out", why))
	}
	r, err := data.OpenTree(opt.Log, data.ReadOptions{MemBudget: opt.MemBudget})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cfg := ReplayConfig{Seed: opt.Seed, MaxSteps: opt.MaxSteps, Level: opt.Level, SkipDivergences: opt.NoDivergences}
	start := time.Now()
	rep, err := ReplayTree(ctx, r, cfg)
	if err != nil && (ctx.Err() == nil || rep == nil) {
		return nil, err
	}
	out := opt.output(rep, r.Meta(), 1, time.Since(start).Seconds())
	out.Shape = "tree"
	if err != nil {
		return out, diag.Interrupted(fmt.Errorf("replay interrupted after %d steps; the report covers those", rep.Steps))
	}
	if rep.LoggedLossless.Verdict == check.Violated || rep.LoggedPIT != nil && rep.LoggedPIT.Verdict == check.Violated {
		out.Violated = append(out.Violated, "logged")
	}
	if opt.FailOnViolation && len(out.Violated) > 0 {
		return out, fmt.Errorf("%w for the logged tree run", ErrViolated)
	}
	return out, nil
}
