package draft_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/run"
)

// rootRule accepts nothing and emits the target's argmax at the root: a
// tree verifier that draws no randomness, for tests of the drafting.
type rootRule struct{}

func (rootRule) AcceptTree(_ *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	return sim.TreeOutcome{Node: 0, Next: sim.ArgmaxRow(t.Nodes[0].P)}
}

// CycleTrees drafts trial t from drafter t mod n with its target, from
// the round's Draft stream: the rounds equal sim.DraftTree by hand on
// sim.NewRand(seed, StreamID(name+"/draft", t)), for any worker count.
func TestCycleTrees(t *testing.T) {
	pair := testPair(t)
	ds := treeDrafters(t, pair)
	drafters := []sim.Drafter{ds["wor"], ds["iid"], ds["greedy"]}
	other := sim.Fixed{0.2, 0.5, 0.3}
	targets := []sim.Model{pair.P, other, pair.P}
	l := &run.Loop{Seed: 4, Keys: run.Named("cyc"), Trees: run.CycleTrees(drafters, targets),
		Verifiers: []run.Verifier{run.Tree(rootRule{})}}
	const n = 3000
	for _, workers := range []int{1, 2} {
		keys, _, err := run.Rounds(context.Background(), n, l, sim.MCOptions{Workers: workers},
			func() *[]string { return new([]string) },
			func(acc *[]string, r *run.Round) error {
				*acc = append(*acc, treeKey(r.Tree)+fmtRow(r.Tree.Nodes[0].P))
				return nil
			}, func(dst, src *[]string) { *dst = append(*dst, *src...) })
		if err != nil {
			t.Fatal(err)
		}
		for i := range int64(n) {
			var tr sim.Tree
			c := i % 3
			sim.DraftTree(sim.NewRand(4, sim.StreamID("cyc/draft", uint64(i))), drafters[c], targets[c], nil, &tr)
			if want := treeKey(&tr) + fmtRow(tr.Nodes[0].P); (*keys)[i] != want {
				t.Fatalf("%d workers, trial %d: round %s, by hand %s", workers, i, (*keys)[i], want)
			}
		}
	}
}

func fmtRow(r sim.Row) string {
	s := "|"
	for x := range r.Len() {
		s += string(rune('0' + int(10*r.At(x))))
	}
	return s
}

// TreeRounds drafts after the context the caller grows: the tree's rows
// are the models' after ctx.
func TestTreeRounds(t *testing.T) {
	pair := testPair(t)
	d, _ := draft.NewTopK(pair.Q, 2, 2, nil)
	ctx := []int{2}
	l := &run.Loop{Keys: run.Named("tr"), Trees: draft.TreeRounds(d, pair.P, &ctx), Verifiers: []run.Verifier{run.Tree(rootRule{})}}
	w, err := l.NewWorker()
	if err != nil {
		t.Fatal(err)
	}
	p, q := make([]float64, 3), make([]float64, 3)
	for step := range 5 {
		r, err := w.Round(run.Shared(sim.NewRand(1, 1)), int64(step))
		if err != nil {
			t.Fatal(err)
		}
		pair.P.Next(ctx, p)
		pair.Q.Next(ctx, q)
		for x := range 3 {
			if r.Tree.Nodes[0].P.At(x) != p[x] || r.Tree.Nodes[0].Q.At(x) != q[x] {
				t.Fatalf("step %d: root rows are not the models' after %v", step, ctx)
			}
		}
		ctx = append(ctx, r.TreeOutcome().Next)
	}
}
