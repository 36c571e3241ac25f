package algos

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/source"
)

// fixedPair is the context-free pair of p and q.
func fixedPair(p, q []float64) sim.Pair {
	return sim.Pair{Name: "fixed", P: sim.Fixed(p), Q: sim.Fixed(q)}
}

func mustTreeOpt(t *testing.T, pair sim.Pair, cfg TreeOptimumConfig) float64 {
	t.Helper()
	v, err := OptimalTreeAccepted(pair, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// At depth 1 the optimum is α* of the draft kind, to 1e-9: the exhaustive
// min-cut with and without replacement, and p of the top-k set.
func TestTreeOptimumDepthOne(t *testing.T) {
	for _, c := range []struct{ v, k int }{{3, 2}, {4, 2}, {4, 3}, {5, 2}, {5, 3}} {
		p, q := randDist(t, uint64(c.v*7+c.k), c.v, 0.5), randDist(t, uint64(c.v*7+c.k+31), c.v, 0.5)
		pair := fixedPair(p, q)
		iid, _ := OptimalAcceptanceExhaustive(p, q, c.k, true)
		wor, _ := OptimalAcceptanceExhaustive(p, q, c.k, false)
		top := 0.0
		for _, y := range sim.TopTokens(nil, q, c.k) {
			top += p[y]
		}
		for _, r := range []struct {
			kind sim.DraftKind
			want float64
		}{{sim.DraftIID, iid}, {sim.DraftWOR, wor}, {sim.DraftTopK, top}} {
			got := mustTreeOpt(t, pair, TreeOptimumConfig{Draft: r.kind, K: c.k, Depth: 1})
			if math.Abs(got-r.want) > 1e-9 {
				t.Errorf("V=%d k=%d %s: V_1 = %.15g, alpha* = %.15g", c.v, c.k, r.kind, got, r.want)
			}
		}
	}
}

// On a context-free pair with the same children at every depth (wor and
// topk with branch k at each depth, and one i.i.d. chain) every node's
// weights are the constant 1 + V_{d-1}, so V_d = α*(1 + V_{d-1}):
// V_d = α*(1 - α*^d)/(1 - α*), to 1e-9.
func TestTreeOptimumContextFree(t *testing.T) {
	p, q := randDist(t, 41, 4, 0.5), randDist(t, 42, 4, 0.5)
	pair := fixedPair(p, q)
	for _, r := range []struct {
		kind sim.DraftKind
		k    int
	}{{sim.DraftWOR, 2}, {sim.DraftTopK, 2}, {sim.DraftWOR, 3}, {sim.DraftIID, 1}} {
		a := mustTreeOpt(t, pair, TreeOptimumConfig{Draft: r.kind, K: r.k, Depth: 1})
		for d := 1; d <= 3; d++ {
			cfg := TreeOptimumConfig{Draft: r.kind, K: r.k, Depth: d}
			if r.kind != sim.DraftIID {
				cfg.Branch = make([]int, d)
				for i := range cfg.Branch {
					cfg.Branch[i] = r.k
				}
			}
			want := a * (1 - math.Pow(a, float64(d))) / (1 - a)
			if got := mustTreeOpt(t, pair, cfg); math.Abs(got-want) > 1e-9 {
				t.Errorf("%s k=%d d=%d: V_d = %.15g, closed form %.15g (alpha* %.15g)", r.kind, r.k, d, got, want, a)
			}
		}
	}
}

// nodeWise reports whether a built tree rule verifies node by node
// (walkAccept/walkLaw through step and stepLaw): the class the optimum
// is taken over.
func nodeWise(a sim.TreeAlgorithm) bool {
	_, ok := a.(nodeRule)
	return ok
}

// On small Markov pairs the optimum is at least every node-wise lossless
// tree rule's exact E[accepted] (exact engine) on its own draft kind, to
// 1e-9, and at depth 1 on i.i.d. drafts ot-optimal attains it (1e-9). A
// rule that looks ahead is outside the class: on a chain the optimum is
// token verification's E[accepted], and the test shows a look-ahead rule
// exceeding it where one is registered for that kind.
func TestTreeOptimumMarkov(t *testing.T) {
	compared := 0
	for _, spec := range []string{"markov:V=3,order=1,seed=7", "markov:V=4,order=1,seed=11,quality=0.3"} {
		src, err := source.New(spec, 0, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		pair, _ := sim.PairOf(src)
		for _, d := range []int{1, 2, 3} {
			for _, k := range []int{1, 2} {
				for _, e := range AllTree() {
					if e.Mutant || e.Lossy || !drawnKind(e.Draft) {
						continue
					}
					compared += treeOptCase(t, pair, spec, e, k, d)
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no tree rule compared")
	}
}

// drawnKind reports whether the optimum takes drafts of kind k.
func drawnKind(k sim.DraftKind) bool {
	return k == sim.DraftIID || k == sim.DraftWOR || k == sim.DraftTopK
}

// treeOptCase compares rule e with the optimum on one pair, k and depth;
// it returns 1 if it compared.
func treeOptCase(t *testing.T, pair sim.Pair, spec string, e TreeEntry, k, d int) int {
	t.Helper()
	a, err := e.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	lw, ok := a.(sim.TreeLawer)
	if !ok {
		return 0
	}
	dr, err := draft.NewTree(e.Draft, draft.Config{Q: pair.Q, K: k, Depth: d})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.ExactTree(pair.P, dr, lw, sim.TreeExactConfig{})
	if err != nil {
		t.Fatal(err)
	}
	opt := mustTreeOpt(t, pair, TreeOptimumConfig{Draft: e.Draft, K: k, Depth: d})
	name := fmt.Sprintf("%s %s k=%d d=%d", spec, e.Name, k, d)
	switch {
	case nodeWise(a) && res.ExpectedAccepted > opt+1e-9:
		t.Errorf("%s: node-wise rule's E[accepted] %.15g above the optimum %.15g", name, res.ExpectedAccepted, opt)
	case e.Name == "ot-optimal" && d == 1 && math.Abs(res.ExpectedAccepted-opt) > 1e-9:
		t.Errorf("%s: ot-optimal %.15g, optimum %.15g", name, res.ExpectedAccepted, opt)
	}
	if !nodeWise(a) {
		return 0
	}
	return 1
}

// On a single chain (k = 1) the optimum is token verification's exact
// E[accepted] (1e-9), and block verification's, a look-ahead verifier, is
// above it by more than 1e-3 at depths 2 and 3: the recursion is the
// optimum of node-wise verifiers, not a bound on every lossless one.
func TestTreeOptimumChain(t *testing.T) {
	for _, spec := range []string{"markov:V=3,order=1,seed=7", "markov:V=4,order=1,seed=11,quality=0.3"} {
		src, err := source.New(spec, 0, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		pair, _ := sim.PairOf(src)
		for d := 1; d <= 3; d++ {
			opt := mustTreeOpt(t, pair, TreeOptimumConfig{Draft: sim.DraftIID, K: 1, Depth: d})
			tok := mustExact(t, pair, Token{}, sim.ExactConfig{Gamma: d}).ExpectedAccepted
			blk := mustExact(t, pair, Block{}, sim.ExactConfig{Gamma: d}).ExpectedAccepted
			if math.Abs(opt-tok) > 1e-9 {
				t.Errorf("%s d=%d: optimum %.15g, token verification %.15g", spec, d, opt, tok)
			}
			if d > 1 && !(blk > opt+1e-3) {
				t.Errorf("%s d=%d: block verification %.15g not above the node-wise optimum %.15g", spec, d, blk, opt)
			}
		}
	}
}

// Sizes the enumeration cannot do are refused with the reason, as are
// drafts it does not take and a branch of the wrong length.
func TestTreeOptimumRefuses(t *testing.T) {
	big := make([]float64, 64)
	for i := range big {
		big[i] = 1.0 / 64
	}
	src, err := source.New("markov:V=3,order=1,seed=7", 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pair, _ := sim.PairOf(src)
	for _, c := range []struct {
		pair sim.Pair
		cfg  TreeOptimumConfig
		want string
	}{
		{fixedPair(big, big), TreeOptimumConfig{Draft: sim.DraftIID, K: 4, Depth: 1}, "columns"},
		{pair, TreeOptimumConfig{Draft: sim.DraftGreedy, K: 2, Depth: 2}, "iid, wor or topk"},
		{pair, TreeOptimumConfig{Draft: sim.DraftWOR, K: 2, Depth: 2, Branch: []int{2}}, "one per depth"},
		{pair, TreeOptimumConfig{Draft: sim.DraftIID, K: 2, Depth: 0}, "depth = 0"},
	} {
		if _, err := OptimalTreeAccepted(c.pair, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", c.cfg, err, c.want)
		}
	}
	// the run's cells: a limit of 60 is below the root's LP alone (at most
	// 3 sets of 2 over V = 3: 6 rows, up to 12 columns), 2^20 holds them all
	cfg := TreeOptimumConfig{Draft: sim.DraftWOR, K: 2, Depth: 2}
	if _, err := optimalTreeAccepted(pair, cfg, 60); err == nil || !strings.Contains(err.Error(), "cells") {
		t.Errorf("a run past its cells: error %v, want one naming the cells", err)
	}
	if _, err := optimalTreeAccepted(pair, cfg, 1<<20); err != nil {
		t.Errorf("the same run within its cells: %v", err)
	}
}
