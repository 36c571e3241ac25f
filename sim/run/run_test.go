package run_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/pooltest"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/run"
)

// testPool is a pool of 3 contexts over V = 5 tokens with γ = 3, rows
// drawn from a fixed seed.
func testPool(t *testing.T) *sim.Pool { return pooltest.Random(t, "test", 5, 3, 3, 0.05, 1, 2) }

// speculative is Leviathan et al.'s rule written out for the test (accept
// x_i with probability min(1, p/q), else sample the residual; bonus from
// p_γ), drawing one uniform per examined position and one for the next
// token.
type speculative struct{}

func (speculative) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		p, q := b.P[i].At(x), b.Q[i].At(x)
		if rng.Float64()*q < p {
			continue
		}
		res := make([]float64, b.V())
		for t := range res {
			res[t] = max(b.P[i].At(t)-b.Q[i].At(t), 0)
		}
		return sim.Outcome{Accepted: i, Next: sim.SampleCDF(rng.Float64()*floatsSum(res), res)}
	}
	g := len(b.Tokens)
	return sim.Outcome{Accepted: g, Next: sim.SampleRow(rng.Float64(), b.P[g])}
}

func floatsSum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// trace records every round's context, drafts and outcomes.
type trace struct{ rows [][]int }

func (tr *trace) add(r *run.Round) error {
	row := []int{int(r.Trial), r.Block.Ctx}
	row = append(row, r.Block.Tokens...)
	for _, o := range r.Outcomes {
		row = append(row, o.Accepted, o.Next)
	}
	tr.rows = append(tr.rows, row)
	return nil
}

func rounds(t *testing.T, l *run.Loop, n int64, workers int) [][]int {
	t.Helper()
	tot, done, err := run.Rounds(context.Background(), n, l, sim.MCOptions{Workers: workers},
		func() *trace { return &trace{} }, (*trace).add,
		func(dst, src *trace) { dst.rows = append(dst.rows, src.rows...) })
	if err != nil {
		t.Fatal(err)
	}
	if done != n || int64(len(tot.rows)) != n {
		t.Fatalf("done = %d with %d rows, want %d", done, len(tot.rows), n)
	}
	for i, r := range tot.rows {
		if r[0] != i {
			t.Fatalf("row %d is trial %d: rounds are not merged in trial order", i, r[0])
		}
	}
	return tot.rows
}

// The rounds depend on the seed and the trial only: any worker count and
// any batch size give the same drafts and outcomes when every role has a
// stream of its own keyed by trial (Batch 1), and any worker count gives
// the same result for a fixed batch size.
func TestRoundsWorkers(t *testing.T) {
	pl := testPool(t)
	for _, batch := range []int{1, 7} {
		l := &run.Loop{Seed: 3, Keys: run.Named("test"), Batch: batch, Chains: run.Blocks(pl),
			Verifiers: []run.Verifier{run.Chain(speculative{})}}
		one := rounds(t, l, 3000, 1)
		two := rounds(t, l, 3000, 2)
		if !slices.EqualFunc(one, two, slices.Equal) {
			t.Errorf("batch %d: 1 and 2 workers differ", batch)
		}
	}
}

// Shared streams are the hand-written loop of one generator: a pool's
// round draws its context, then its draft, then the rule's coins, all from
// rng, as Pool.Next followed by Accept does.
func TestSharedIsTheHandLoop(t *testing.T) {
	pl := testPool(t)
	l := &run.Loop{Keys: run.Named("hand"), Chains: run.Blocks(pl), Verifiers: []run.Verifier{run.Chain(speculative{})}}
	w, err := l.NewWorker()
	if err != nil {
		t.Fatal(err)
	}
	got, want := sim.NewRand(9, 4), sim.NewRand(9, 4)
	s := run.Shared(got)
	for i := range int64(500) {
		r, err := w.Round(s, i)
		if err != nil {
			t.Fatal(err)
		}
		var b sim.Block
		_ = pl.Next(want, &b)
		o := speculative{}.Accept(want, &b)
		if r.Block.Ctx != b.Ctx || !slices.Equal(r.Block.Tokens, b.Tokens) || r.Outcome() != o {
			t.Fatalf("round %d: context %d, drafts %v, outcome %v; hand loop %d, %v, %v", i, r.Block.Ctx, r.Block.Tokens, r.Outcome(), b.Ctx, b.Tokens, o)
		}
	}
}

// Named keys give each role its own stream: a pool's context comes from
// StreamID(name+"/source", u), its draft from StreamID(name+"/draft", u)
// and the coins from StreamID(name+"/coins", u).
func TestNamedStreams(t *testing.T) {
	pl := testPool(t)
	const seed, n = 5, 300
	l := &run.Loop{Seed: seed, Keys: run.Named("x"), Chains: run.Blocks(pl),
		Verifiers: []run.Verifier{run.Chain(speculative{})}}
	got := rounds(t, l, n, 1)
	for i := range int64(n) {
		var b sim.Block
		c := sim.NewRand(seed, sim.StreamID("x/source", uint64(i))).IntN(pl.Contexts)
		pl.Fill(sim.NewRand(seed, sim.StreamID("x/draft", uint64(i))), c, &b)
		o := speculative{}.Accept(sim.NewRand(seed, sim.StreamID("x/coins", uint64(i))), &b)
		want := append(append([]int{int(i), b.Ctx}, b.Tokens...), o.Accepted, o.Next)
		if !slices.Equal(got[i], want) {
			t.Fatalf("trial %d: round %v, want %v", i, got[i], want)
		}
	}
}

// stepper verifies a batch with a chain rule, as an external
// implementation would: one call per unit, the unit's coins in order.
type stepper struct{ a sim.Algorithm }

func (s stepper) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	for i := range bs {
		outs[i] = s.a.Accept(rng, &bs[i])
	}
	return nil
}

// Common random numbers: a second verifier sees the first one's drafts and
// coins, in every round of a unit, so the same rule twice gives the same
// outcomes; and a batch stepper that applies the rule in order gives the
// chain verifier's outcomes.
func TestCommonRandomNumbers(t *testing.T) {
	pl := testPool(t)
	l := &run.Loop{Seed: 1, Keys: run.Named("crn"), Batch: 5, Chains: run.Cycle(pl),
		Verifiers: []run.Verifier{run.Chain(speculative{}), run.Batch(stepper{speculative{}}), run.Chain(speculative{})}}
	rows := rounds(t, l, 1000, 2)
	differ := 0
	for i, r := range rows {
		if r[1] != i%pl.Contexts {
			t.Fatalf("trial %d in context %d; Cycle puts it in %d", i, r[1], i%pl.Contexts)
		}
		o := r[2+pl.Gamma:]
		if !slices.Equal(o[0:2], o[2:4]) || !slices.Equal(o[0:2], o[4:6]) {
			t.Fatalf("trial %d: outcomes %v differ between verifiers of the same rule", i, o)
		}
		if i > 0 && !slices.Equal(rows[i-1][2:], r[2:]) {
			differ++
		}
	}
	if differ < 900 {
		t.Errorf("only %d of 1000 rounds differ from the one before: the streams do not move", differ)
	}
}

var errDraft = errors.New("no more drafts")

type failing struct{ at int64 }

func (f failing) DraftChain(r *run.Round, dst *sim.Block) error {
	if r.Trial == f.at {
		return errDraft
	}
	dst.Tokens = append(dst.Tokens[:0], 0)
	dst.Q = append(dst.Q[:0], sim.F64([]float64{1}))
	dst.P = append(dst.P[:0], sim.F64([]float64{1}), sim.F64([]float64{1}))
	return nil
}

// A drafter's error stops the run and comes back with no partial count.
func TestRoundsError(t *testing.T) {
	l := &run.Loop{Seed: 1, Keys: run.Named("err"), Chains: failing{at: 3000},
		Verifiers: []run.Verifier{run.Chain(speculative{})}}
	_, done, err := run.Rounds(context.Background(), 5000, l, sim.MCOptions{Workers: 2},
		func() *int { return new(int) }, func(*int, *run.Round) error { return nil }, func(*int, *int) {})
	if !errors.Is(err, errDraft) || done != 0 {
		t.Errorf("err = %v, done = %d; want errDraft and 0", err, done)
	}
}

// Loops of the wrong shape are refused with a message, not a panic.
func TestLoopShape(t *testing.T) {
	pl := testPool(t)
	for _, l := range []*run.Loop{
		{Keys: run.Named("a"), Verifiers: []run.Verifier{run.Chain(speculative{})}},
		{Keys: run.Named("a"), Chains: run.Blocks(pl), Trees: run.CycleTrees([]sim.Drafter{nil}, []sim.Model{nil})},
		{Keys: run.Named("a"), Chains: run.Blocks(pl), Verifiers: []run.Verifier{{}}},
		{Chains: run.Blocks(pl)},
		{Keys: run.Named("a"), Chains: run.Blocks(pl), Batch: -1},
	} {
		if _, err := l.NewWorker(); err == nil {
			t.Errorf("loop %+v accepted", *l)
		}
	}
}

// Cancelling the context returns a prefix of whole trials.
func TestRoundsCancel(t *testing.T) {
	pl := testPool(t)
	ctx, cancel := context.WithCancel(context.Background())
	l := &run.Loop{Seed: 1, Keys: run.Named("c"), Chains: run.Blocks(pl), Verifiers: []run.Verifier{run.Chain(speculative{})}}
	var seen int64
	tot, done, err := run.Rounds(ctx, 1<<40, l, sim.MCOptions{Workers: 1},
		func() *int64 { return new(int64) },
		func(a *int64, r *run.Round) error {
			*a++
			if seen++; seen == 5000 {
				cancel()
			}
			return nil
		}, func(dst, src *int64) { *dst += *src })
	if !errors.Is(err, context.Canceled) || done != *tot || done < 5000 || done > 5000+8 {
		t.Errorf("err = %v, done = %d, recorded %d; want the cancelled prefix of the 5000 trials before the cancel (within 8)", err, done, *tot)
	}
}

// A verifier that fails with an error wrapping context.Canceled (it gave
// up a wait for Ctrl-C) stops the run like a cancelled context: the units
// before it are kept, counted and recorded alike (issue 23: an
// interrupted external check reported 0 trials); any other error still
// returns a zero count.
func TestRoundsInterruptedVerifier(t *testing.T) {
	for _, c := range []struct {
		err  error
		keep bool
	}{{fmt.Errorf("waiting: %w", context.Canceled), true}, {errors.New("the implementation crashed"), false}} {
		pl := testPool(t)
		var units atomic.Int64
		st := failingStepper{after: 37, err: c.err, units: &units}
		l := &run.Loop{Seed: 1, Keys: run.Named("c"), Chains: run.Blocks(pl), Batch: 4, Verifiers: []run.Verifier{run.Batch(st)}}
		tot, done, err := run.Rounds(context.Background(), 1<<20, l, sim.MCOptions{Workers: 1},
			func() *int64 { return new(int64) },
			func(a *int64, r *run.Round) error { *a++; return nil },
			func(dst, src *int64) { *dst += *src })
		if !errors.Is(err, c.err) {
			t.Fatalf("err = %v, want %v", err, c.err)
		}
		if c.keep && (done != *tot || done != 37*4) {
			t.Errorf("%v: %d trials reported, %d recorded; want the 37 units of 4 before the failure", c.err, done, *tot)
		}
		if !c.keep && done != 0 {
			t.Errorf("%v: %d trials reported, want 0", c.err, done)
		}
	}
}

// failingStepper verifies a batch with the token rule, and fails on
// every batch from unit after on (in unit order: Steps is called per
// unit, and the rng is the unit's).
type failingStepper struct {
	after int64
	err   error
	units *atomic.Int64
}

func (f failingStepper) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	_ = rng
	if f.units.Add(1) > f.after {
		return f.err
	}
	for i := range bs {
		outs[i] = speculative{}.Accept(rng, &bs[i])
	}
	return nil
}

// treeStepper verifies a batch of trees with a tree rule, in order.
type treeStepper struct{ a sim.TreeAlgorithm }

func (s treeStepper) TreeSteps(rng *rand.Rand, ts []*sim.Tree, outs []sim.TreeOutcome) error {
	for i, t := range ts {
		outs[i] = s.a.AcceptTree(rng, t)
	}
	return nil
}

// A batch tree stepper gets the unit's trees in one call and gives the
// outcomes of the tree rule it applies in order: rounds of a loop with a
// Tree and a BatchTree verifier of the same rule agree (common random
// numbers), at any worker count.
func TestBatchTree(t *testing.T) {
	pl := testPool(t)
	var ds []sim.Drafter
	var ps []sim.Model
	for c := 0; c < pl.Contexts; c++ {
		var p, q posModel
		for i := 0; i <= pl.Gamma; i++ {
			p = append(p, sim.Float64s(nil, pl.PRow(c, i)))
			if i < pl.Gamma {
				q = append(q, sim.Float64s(nil, pl.QRow(c, i)))
			}
		}
		d, err := draft.NewTree(sim.DraftIID, draft.Config{Q: q, K: 3, Depth: pl.Gamma})
		if err != nil {
			t.Fatal(err)
		}
		ds, ps = append(ds, d), append(ps, p)
	}
	l := &run.Loop{Seed: 2, Keys: run.Named("bt"), Batch: 6, Trees: run.CycleTrees(ds, ps),
		Verifiers: []run.Verifier{run.Tree(algos.SpecInfer{}), run.BatchTree(treeStepper{algos.SpecInfer{}})}}
	var prev []sim.TreeOutcome
	for _, workers := range []int{1, 2} {
		type acc struct{ outs []sim.TreeOutcome }
		tot, done, err := run.Rounds(context.Background(), 500, l, sim.MCOptions{Workers: workers},
			func() *acc { return &acc{} },
			func(a *acc, r *run.Round) error {
				if r.TreeOutcomes[0] != r.TreeOutcomes[1] {
					t.Fatalf("trial %d: tree rule %v, batch stepper %v", r.Trial, r.TreeOutcomes[0], r.TreeOutcomes[1])
				}
				a.outs = append(a.outs, r.TreeOutcomes[0])
				return nil
			}, func(dst, src *acc) { dst.outs = append(dst.outs, src.outs...) })
		if err != nil || done != 500 {
			t.Fatalf("done %d, err %v", done, err)
		}
		if prev != nil && !slices.Equal(prev, tot.outs) {
			t.Errorf("2 workers give other outcomes than 1")
		}
		prev = tot.outs
	}
	accepted := 0
	for _, o := range prev {
		if o.Node != 0 {
			accepted++
		}
	}
	if accepted < 100 {
		t.Errorf("only %d of 500 trees accepted a draft token: the trees are not the pool's", accepted)
	}
}

// posModel is a pool context as a model: the row at position len(ctx).
type posModel [][]float64

func (m posModel) Vocab() int                    { return len(m[0]) }
func (m posModel) Next(ctx []int, dst []float64) { copy(dst, m[min(len(ctx), len(m)-1)]) }

// TestRoundsRange: ranges of units that split a run (at any units, not
// only chunk boundaries) give exactly its rounds: the same trials, drafts
// and outcomes, the last unit cut at the run's trial count, and each
// range's trial count.
func TestRoundsRange(t *testing.T) {
	pl := testPool(t)
	l := &run.Loop{Seed: 3, Keys: run.Named("test"), Batch: 7, Chains: run.Blocks(pl),
		Verifiers: []run.Verifier{run.Chain(speculative{})}}
	const n = 3000 // 429 units, the last of 4 trials
	whole := rounds(t, l, n, 2)
	var got [][]int
	for _, cut := range [][2]int64{{0, 100}, {100, 101}, {101, 101}, {101, 429}, {429, 500}} {
		tot, done, err := run.RoundsRange(context.Background(), cut[0], cut[1], n, l, sim.MCOptions{Workers: 2},
			func() *trace { return &trace{} }, (*trace).add,
			func(dst, src *trace) { dst.rows = append(dst.rows, src.rows...) })
		if err != nil {
			t.Fatal(err)
		}
		if want := min(cut[1]*7, n) - min(cut[0]*7, n); done != want || int64(len(tot.rows)) != want {
			t.Fatalf("units %d..%d: %d trials, %d rows; want %d", cut[0], cut[1], done, len(tot.rows), want)
		}
		got = append(got, tot.rows...)
	}
	if !slices.EqualFunc(got, whole, slices.Equal) {
		t.Error("the ranges' rounds differ from the whole run's")
	}
}
