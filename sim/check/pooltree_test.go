package check_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
)

// smallPool is a pool of 4 contexts over V = 6 tokens with γ = 2, its rows
// drawn from a fixed seed.
func smallPool(t *testing.T) *sim.Pool {
	t.Helper()
	const v, g, nc = 6, 2, 4
	rng := rand.New(rand.NewPCG(7, 8))
	row := func() []float32 {
		r := make([]float32, v)
		s := float32(0)
		for i := range r {
			r[i] = float32(rng.Float64() + 0.02)
			s += r[i]
		}
		for i := range r {
			r[i] /= s
		}
		return r
	}
	var p, q [][]float32
	for range nc {
		for range g + 1 {
			p = append(p, row())
		}
		for range g {
			q = append(q, row())
		}
	}
	pl, err := sim.PoolFromRows("small", g, p, q)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// Tree rules on a pool: every context drafts its own trees (trial t in
// context t mod 4). SpecInfer is lossless and the naive tree rule is not;
// the result does not depend on the worker count.
func TestPoolTreeVerdicts(t *testing.T) {
	t.Parallel()
	pl := smallPool(t)
	for _, c := range []struct {
		name string
		a    sim.TreeAlgorithm
		want string
	}{{"specinfer", algos.SpecInfer{}, check.NotDetected}, {"naive", algos.Naive{}, check.Violated}} {
		var prev check.Result
		for i, w := range []int{1, 2} {
			r := check.Rule{Name: c.name, Tree: c.a, Draft: sim.DraftIID, K: 2,
				Drafter: func(q sim.Model, depth int) (sim.Drafter, error) {
					return draft.NewTree(sim.DraftIID, draft.Config{Q: q, K: 2, Depth: depth})
				}}
			res, err := check.Check(context.Background(), sim.Source{Spec: pl.Name, BlockSource: pl}, r,
				// seed 4: at level 0.01 a lossless rule is called violated at
				// 1% of seeds (2 of seeds 1..100 here, 3 among them)
				check.Config{Trials: 20000, Seed: 4, Workers: w})
			wantVerdict(t, res, err, c.want, c.name)
			if i > 0 && (res.PValue != prev.PValue || res.MeanEmitted != prev.MeanEmitted) {
				t.Errorf("%s: 2 workers give p %v, emitted %v; 1 worker p %v, emitted %v", c.name, res.PValue, res.MeanEmitted, prev.PValue, prev.MeanEmitted)
			}
			prev = res
		}
	}
}

// A component folds into the verdict: violated wins, inconclusive turns a
// preserved result inconclusive, a preserved or n/a component changes
// nothing.
func TestAddComponent(t *testing.T) {
	for _, c := range []struct{ before, comp, after string }{
		{check.NotDetected, check.NotDetected, check.NotDetected},
		{check.NotDetected, check.NotApplicable, check.NotDetected},
		{check.NotDetected, check.Inconclusive, check.Inconclusive},
		{check.NotDetected, check.Violated, check.Violated},
		{check.Inconclusive, check.Violated, check.Violated},
		{check.Violated, check.Inconclusive, check.Violated},
		{check.Violated, check.NotDetected, check.Violated},
	} {
		r := check.Result{Verdict: c.before}
		r.AddComponent(check.Component{Name: "x", Verdict: c.comp})
		if r.Verdict != c.after || len(r.Components) != 1 {
			t.Errorf("%s + component %s = %s, want %s", c.before, c.comp, r.Verdict, c.after)
		}
	}
}
