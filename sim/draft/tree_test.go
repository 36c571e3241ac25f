package draft_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/stattest"
)

// treeKey renders a tree's draws node by node (canonical for a drafter).
func treeKey(t *sim.Tree) string {
	var b strings.Builder
	for i := range t.Nodes {
		fmt.Fprintf(&b, "%d:", i)
		for _, c := range t.Nodes[i].Draws {
			fmt.Fprintf(&b, "%d,", t.Nodes[c].Token)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// testPair is a Markov pair of order 1 over V = 3 whose rows depend on
// the previous token, so every drafter's children depend on the path.
func testPair(t *testing.T) sim.Pair {
	t.Helper()
	pair, err := sim.NewMarkovPair(sim.NewRand(3, sim.StreamID("tree-test/pair")), sim.MarkovConfig{V: 3, Order: 1, A: 0.8, Quality: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// treeDrafters are one of every tree drafter over pair's draft model.
func treeDrafters(t *testing.T, pair sim.Pair) map[string]sim.Drafter {
	t.Helper()
	ds := map[string]sim.Drafter{}
	for _, c := range []draft.Config{
		{Name: "iid", Q: pair.Q, K: 2, Depth: 2},
		{Name: "wor", Q: pair.Q, Branch: []int{2, 2}},
		{Name: "topk", Q: pair.Q, Branch: []int{2, 1}},
		{Name: "greedy", Q: pair.Q, Branch: []int{2, 2}},
		{Name: "fixed", Cands: [][]int{{0, 1}, {0, 2}, {1}}},
		{Name: draft.DynamicName, Q: pair.Q, K: 2, Depth: 3},
		{Name: draft.DraftDelayed.String(), Q: pair.Q, K: 2, Depth: 3, Delay: 1},
		{Name: draft.DraftHub.String(), Q: pair.Q, K: 2, Depth: 2},
	} {
		d, err := draft.New(c)
		if err != nil {
			t.Fatal(err)
		}
		if d.Tree == nil || d.Chain != nil {
			t.Fatalf("%s: New gave %+v, want a tree drafter", c.Name, d)
		}
		ds[c.Name] = d.Tree
	}
	return ds
}

// enumerate returns the trees of d with their probabilities, failing on a
// tree enumerated twice, a negative weight or weights that do not sum to
// 1 within 1e-12.
func enumerate(t *testing.T, d sim.Drafter, ctx []int) map[string]float64 {
	t.Helper()
	weights := map[string]float64{}
	total := 0.0
	err := d.Enumerate(ctx, func(tr *sim.Tree, w float64) error {
		k := treeKey(tr)
		if _, dup := weights[k]; dup {
			return fmt.Errorf("tree %s enumerated twice", k)
		}
		if !(w > 0) {
			return fmt.Errorf("tree %s has weight %g", k, w)
		}
		weights[k] = w
		total += w
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(total-1) > 1e-12 {
		t.Fatalf("%s: weights sum to %.15g", d.Kind(), total)
	}
	return weights
}

// Enumerate's weights form a distribution over distinct trees, and Draft
// samples that distribution: 20 000 draws pass a χ² test at level 1e-6
// (fixed seed; per-assertion false-failure rate 1e-6). The deterministic
// drafters (topk, fixed, dynamic) enumerate one tree, which Draft always
// builds.
func TestTreeDraftersMatchEnumeration(t *testing.T) {
	pair := testPair(t)
	for name, d := range treeDrafters(t, pair) {
		t.Run(name, func(t *testing.T) {
			weights := enumerate(t, d, nil)
			keys := make([]string, 0, len(weights))
			for k := range weights {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			idx := map[string]int{}
			probs := make([]float64, len(keys))
			for i, k := range keys {
				idx[k] = i
				probs[i] = weights[k]
			}
			deterministic := name == "topk" || name == "fixed" || name == draft.DynamicName
			if deterministic != (len(keys) == 1) {
				t.Fatalf("%d trees enumerated; deterministic = %v", len(keys), deterministic)
			}
			obs := make([]int64, len(keys))
			rng := sim.NewRand(1, sim.StreamID("tree-test/draft", uint64(d.Kind())))
			var tr sim.Tree
			for range 20000 {
				sim.DraftTree(rng, d, pair.P, nil, &tr)
				if err := tr.Check(); err != nil {
					t.Fatal(err)
				}
				if tr.MaxDepth() != d.Depth() {
					t.Fatalf("tree of depth %d, drafter's %d", tr.MaxDepth(), d.Depth())
				}
				i, ok := idx[treeKey(&tr)]
				if !ok {
					t.Fatalf("drafted tree %s is not enumerated", treeKey(&tr))
				}
				obs[i]++
			}
			if len(keys) == 1 {
				return
			}
			res, err := stattest.ChiSquare(obs, probs, 5)
			if err != nil {
				t.Fatal(err)
			}
			if res.PValue < 1e-6 {
				t.Errorf("Draft disagrees with Enumerate: X² = %.1f df %d p = %.3g", res.Stat, res.DF, res.PValue)
			}
		})
	}
}

// rootLaw enumerates d at the root of a context-free q and returns the
// probability of each ordered list of the root's draws.
func rootLaw(t *testing.T, d sim.Drafter) map[string]float64 {
	t.Helper()
	law := map[string]float64{}
	total := 0.0
	err := d.Enumerate(nil, func(tr *sim.Tree, w float64) error {
		var draws []int
		for _, c := range tr.Nodes[0].Draws {
			draws = append(draws, tr.Nodes[c].Token)
		}
		law[fmt.Sprint(draws)] += w
		total += w
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(total-1) > 1e-12 {
		t.Fatalf("weights sum to %.15g", total)
	}
	return law
}

// equalLaws fails unless got and want agree on every key within 1e-14.
func equalLaws(t *testing.T, what string, got, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-14 {
			t.Errorf("%s: Pr(%s) = %.15g, want %.15g", what, k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && g != 0 {
			t.Errorf("%s: Pr(%s) = %g, want 0", what, k, g)
		}
	}
}

// The children of the root follow each kind's formula, by exact
// enumeration on q = (0.5, 0.3, 0.2, 0) with 2 children (or 2 chains):
// iid q(x)q(y); wor q(x)q(y)/(1−q(x)); topk the two most likely; greedy
// the top token and one drawn from the rest, q(y)/(1−q(top)). A token of
// q = 0 is never a child.
func TestChildrenLaws(t *testing.T) {
	q := sim.Fixed{0.5, 0.3, 0.2, 0}
	iid, wor, greedy := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for x := range 3 {
		for y := range 3 {
			iid[fmt.Sprint([]int{x, y})] = q[x] * q[y]
			if x != y {
				wor[fmt.Sprint([]int{x, y})] = q[x] * q[y] / (1 - q[x])
			}
		}
	}
	greedy["[0 1]"], greedy["[0 2]"] = 0.3/0.5, 0.2/0.5
	// hub (SpecHub's pair, hub a = 0): Q(i, a) = q(i), Q(a, i) = q(a)q(i)/(1−q(a))
	hub := map[string]float64{"[1 0]": 0.3, "[2 0]": 0.2, "[0 1]": 0.5 * 0.3 / 0.5, "[0 2]": 0.5 * 0.2 / 0.5}
	for _, c := range []struct {
		name string
		want map[string]float64
	}{
		{"iid", iid}, {"wor", wor}, {"topk", map[string]float64{"[0 1]": 1}}, {"greedy", greedy}, {"hub", hub},
	} {
		d, err := draft.New(draft.Config{Name: c.name, Q: q, K: 2, Depth: 1})
		if err != nil {
			t.Fatal(err)
		}
		equalLaws(t, c.name, rootLaw(t, d.Tree), c.want)
	}
	// a node never gets more children than q has tokens with q > 0: five
	// asked for, the three of the support drawn in every order
	d, _ := draft.NewWOR(q, 0, 0, []int{5})
	for k := range rootLaw(t, d) {
		if strings.Count(k, " ") != 2 || strings.Contains(k, "3") {
			t.Errorf("wor with 5 children over a support of 3 drew %s", k)
		}
	}
}

// EAGLE-2's dynamic tree keeps the k expansions of largest path value per
// layer: on the context-free q = (0.5, 0.3, 0.2) with k = 2, layer 1 is
// {0 (0.5), 1 (0.3)}; layer 2 chooses among 0·0 (0.25), 0·1 (0.15),
// 1·0 (0.15), 1·1 (0.09) and keeps 0·0 and 0·1 (ties to the earlier
// parent); the leaves 1, 0·0 and 0·1 are the candidates.
func TestDynamicTree(t *testing.T) {
	d, err := draft.NewDynamic(sim.Fixed{0.5, 0.3, 0.2}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var tr sim.Tree
	sim.DraftTree(nil, d, sim.Fixed{0.2, 0.3, 0.5}, nil, &tr)
	if got, want := treeKey(&tr), "0:0,1,;1:0,1,;2:;3:;4:;"; got != want {
		t.Fatalf("tree %s, want %s", got, want)
	}
	var paths []string
	for _, c := range tr.Cands {
		paths = append(paths, fmt.Sprint(tr.Path(nil, c)))
	}
	if got := strings.Join(paths, " "); got != "[1] [0 0] [0 1]" {
		t.Errorf("candidates %s, want [1] [0 0] [0 1]", got)
	}
	if d.Kind() != sim.DraftTopK {
		t.Errorf("kind %v, want topk", d.Kind())
	}
	for n, want := range []bool{true, true, true, false, false} { // rows of the expanded layers only
		if got := !tr.Nodes[n].Q.IsZero(); got != want {
			t.Errorf("node %d has a draft row: %v, want %v", n, got, want)
		}
	}
}

// Shapes: k i.i.d. chains keep k candidates (repeats merged into one node
// but listed twice); a fixed list becomes a trie in candidate order whose
// vocabulary is the target's.
func TestTreeShapes(t *testing.T) {
	d, err := draft.NewFixed([][]int{{0, 1}, {0, 2}, {0, 3}, {4, 5}})
	if err != nil {
		t.Fatal(err)
	}
	var tr sim.Tree
	sim.DraftTree(sim.NewRand(1, 1), d, sim.Fixed{0.5, 0, 0, 0, 0.5, 0, 0}, nil, &tr)
	if len(tr.Nodes) != 7 || len(tr.Nodes[0].Kids) != 2 || len(tr.Cands) != 4 || tr.Nodes[tr.Cands[3]].Depth != 2 || tr.V != 7 {
		t.Fatalf("fms trie: %d nodes, root kids %v, cands %v, V = %d", len(tr.Nodes), tr.Nodes[0].Kids, tr.Cands, tr.V)
	}
	if got := tr.Path(nil, tr.Cands[1]); got[0] != 0 || got[1] != 2 {
		t.Errorf("candidate 1 path %v, want [0 2]", got)
	}
	iid, _ := draft.NewIID(sim.Fixed{1, 0}, 3, 1)
	sim.DraftTree(sim.NewRand(1, 1), iid, sim.Fixed{0.5, 0.5}, nil, &tr)
	if len(tr.Nodes) != 2 || len(tr.Nodes[0].Draws) != 3 || len(tr.Cands) != 3 {
		t.Errorf("three equal i.i.d. draws: %d nodes, draws %v, cands %v", len(tr.Nodes), tr.Nodes[0].Draws, tr.Cands)
	}
	w, _ := draft.NewWOR(sim.Fixed{0.25, 0.25, 0.25, 0.25}, 0, 0, []int{3, 2})
	if d := w.Branch(); !slices.Equal(d, []int{3, 2}) || w.Depth() != 2 {
		t.Errorf("branch %v depth %d", d, w.Depth())
	}
}

// Drafting is deterministic given the stream, and does not depend on what
// the tree held before: a tree last drafted by another drafter (another
// DrafterState) gives the same tree as a fresh one.
func TestTreeDeterminism(t *testing.T) {
	pair := testPair(t)
	ds := treeDrafters(t, pair)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range ds {
			if !yield(n) {
				return
			}
		}
	})
	var shared sim.Tree
	for i, name := range names {
		other := ds[names[(i+1)%len(names)]]
		for s := range uint64(50) {
			var fresh sim.Tree
			sim.DraftTree(sim.NewRand(s, 7), ds[name], pair.P, []int{1}, &fresh)
			sim.DraftTree(sim.NewRand(s+100, 7), other, pair.P, []int{2}, &shared)
			sim.DraftTree(sim.NewRand(s, 7), ds[name], pair.P, []int{1}, &shared)
			if treeKey(&fresh) != treeKey(&shared) || !slices.Equal(fresh.Cands, shared.Cands) {
				t.Fatalf("%s seed %d: %s fresh, %s after %s", name, s, treeKey(&fresh), treeKey(&shared), other.Kind())
			}
			for n := range fresh.Nodes {
				for x := range pair.P.Vocab() {
					if fresh.Nodes[n].P.At(x) != shared.Nodes[n].P.At(x) ||
						(!fresh.Nodes[n].Q.IsZero() && fresh.Nodes[n].Q.At(x) != shared.Nodes[n].Q.At(x)) {
						t.Fatalf("%s seed %d: node %d rows differ", name, s, n)
					}
				}
			}
		}
	}
}

// Once a tree has grown, drafting into it again does not allocate.
func TestTreeDraftAllocations(t *testing.T) {
	pair := testPair(t)
	ds := treeDrafters(t, pair)
	for _, name := range []string{"iid", "wor", "fixed"} {
		var tr sim.Tree
		rng := sim.NewRand(1, 2)
		sim.DraftTree(rng, ds[name], pair.P, nil, &tr)
		if n := testing.AllocsPerRun(100, func() { sim.DraftTree(rng, ds[name], pair.P, nil, &tr) }); n > 0 {
			t.Errorf("%s: %g allocations per draft", name, n)
		}
	}
}

// EstimateTrees is exact when every draft row has the root's support: it
// matches the number of trees Enumerate visits.
func TestEstimateTreesExact(t *testing.T) {
	q := sim.Fixed{0.4, 0.3, 0.2, 0.1}
	for _, c := range []draft.Config{
		{Name: "wor", Q: q, Branch: []int{3, 2}},
		{Name: "wor", Q: q, Branch: []int{2, 1, 1}},
		{Name: "greedy", Q: q, Branch: []int{2, 2}},
		{Name: "greedy", Q: q, Branch: []int{4, 1}},
		{Name: "topk", Q: q, Branch: []int{3, 2}},
		{Name: "iid", Q: q, K: 2, Depth: 2},
	} {
		d, err := draft.New(c)
		if err != nil {
			t.Fatal(err)
		}
		n := len(enumerate(t, d.Tree, nil))
		est := d.Tree.(sim.TreeCounter).EstimateTrees(nil)
		if est < float64(n)-0.5 || est > float64(n)+0.5 {
			t.Errorf("%s %v k=%d: estimate %g, enumerated %d", c.Name, c.Branch, c.K, est, n)
		}
	}
}

// The tree (wor, branching 3,2,1,1,1,1 on V = 4: about 1.2e19
// trees) is refused by the exact engine before enumerating.
func TestExactTreeRefusesAtOnce(t *testing.T) {
	q := sim.Fixed{0.25, 0.25, 0.25, 0.25}
	d, err := draft.NewWOR(q, 0, 0, []int{3, 2, 1, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sim.ExactTree(q, d, nil, sim.TreeExactConfig{L: 2})
	if err == nil || !strings.Contains(err.Error(), "draft trees to enumerate") {
		t.Fatalf("err = %v", err)
	}
}

// Bad drafter configurations are errors naming the field.
func TestTreeDrafterErrors(t *testing.T) {
	q := sim.Fixed{0.5, 0.5}
	for _, c := range []struct {
		c    draft.Config
		want string
	}{
		{draft.Config{Name: "iid", Q: q, K: 0, Depth: 1}, "k = 0"},
		{draft.Config{Name: "iid", Q: q, K: 2, Depth: 0}, "depth = 0"},
		{draft.Config{Name: "iid", K: 2, Depth: 1}, "no draft model"},
		{draft.Config{Name: "wor", Q: q, Branch: []int{0}}, "branch[0] = 0"},
		{draft.Config{Name: "wor", Q: q, Branch: make([]int, 17)}, "17 branching factors"},
		{draft.Config{Name: "greedy", Q: sim.Fixed(make([]float64, 64)), Branch: []int{64, 64}}, "too many nodes"},
		{draft.Config{Name: "topk", Q: nil, K: 1, Depth: 1}, "no draft model"},
		{draft.Config{Name: "topk", Q: q, K: 0, Depth: 1}, "k = 0"},
		{draft.Config{Name: "fixed"}, "no candidates"},
		{draft.Config{Name: "fixed", Cands: [][]int{{}}}, "candidate 0 has 0 tokens"},
		{draft.Config{Name: "fixed", Cands: [][]int{{1, -1}}}, "negative token -1"},
		{draft.Config{Name: draft.DynamicName, Q: q, K: 65, Depth: 2}, "k = 65"},
		{draft.Config{Name: draft.DynamicName, Q: q, K: 2, Depth: 17}, "depth = 17"},
		{draft.Config{Name: "hub", Q: q, K: 3, Depth: 1}, "k = 3; SpecHub's sparse joint is defined for two drafts"},
		{draft.Config{Name: "hub", Q: q, K: 0, Depth: 1}, "k = 0"},
		{draft.Config{Name: "nope"}, "unknown; use one of " + strings.Join(draft.Names(), ", ")},
	} {
		if _, err := draft.New(c.c); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want it to say %q", c.c, err, c.want)
		}
	}
}

// NewTree builds the drafter of each kind, and names that draft chains
// are refused.
func TestNewTree(t *testing.T) {
	q := sim.Fixed{0.5, 0.5}
	for _, k := range sim.DraftKinds() {
		d, err := draft.NewTree(k, draft.Config{Q: q, K: 2, Depth: 2})
		if err != nil || d.Kind() != k || d.Depth() != 2 {
			t.Errorf("NewTree(%s) = %v, %v", k, d, err)
		}
	}
	d, err := draft.NewTree(sim.DraftFixed, draft.Config{Cands: [][]int{{1}}})
	if err != nil || d.Kind() != sim.DraftFixed {
		t.Errorf("NewTree(fixed) = %v, %v", d, err)
	}
	if _, err := draft.NewTree(sim.DraftKind(9), draft.Config{Q: q}); err == nil {
		t.Error("NewTree of an unknown kind accepted")
	}
}

// A branching is read by exactly the drafters that declare it: for every
// registered drafter, New with Branch either builds a tree of that shape
// (Branches) or refuses with the reason, never ignoring it.
func TestBranchAppliesOrIsRefused(t *testing.T) {
	q := sim.Fixed{0.25, 0.25, 0.25, 0.25}
	branch := []int{3, 2}
	for _, name := range draft.Names() {
		d, err := draft.New(draft.Config{Name: name, Q: q, Heads: []sim.Model{q, q}, K: 2, Depth: 2, Branch: branch,
			Cands: [][]int{{1, 2}}, MaxNgram: 2})
		if !draft.Branches(name) {
			if err == nil || !strings.HasPrefix(err.Error(), "branch does not apply to drafter "+name) {
				t.Errorf("%s ignores Branch but New(Branch=%v) = %v; want it refused", name, branch, err)
			}
			continue
		}
		if err != nil || d.Tree == nil {
			t.Fatalf("%s reads Branch but New(Branch=%v) = %v", name, branch, err)
		}
		tr := &sim.Tree{}
		d.Tree.Draft(sim.NewRand(1, 2), nil, tr)
		// Branch sets the draws of every node by its depth: the root draws
		// 3 tokens, each of its children 2, the leaves (at depth 2) none.
		// Draws, not distinct children: a drafter that draws with
		// replacement merges a token drawn twice into one child.
		for n, nd := range tr.Nodes {
			want := 0
			if nd.Depth < len(branch) {
				want = branch[nd.Depth]
			}
			if len(nd.Draws) != want || (len(nd.Kids) == 0) != (nd.Depth == len(branch)) {
				t.Errorf("%s with Branch %v: node %d at depth %d has %d draws and %d children, want %d draws and children above depth %d",
					name, branch, n, nd.Depth, len(nd.Draws), len(nd.Kids), want, len(branch))
			}
		}
	}
	if len(draft.BranchingNames()) == 0 {
		t.Error("no drafter reads Branch")
	}
}

// The registry's shape lists agree with what New builds: every drafter is
// a chain (ChainNames) or a tree, TreeNames are the trees drawn from a
// draft model (their kind is among sim.DraftKinds), and every tree
// drafter's kind is a registered kind.
func TestRegistryShapes(t *testing.T) {
	q := sim.Fixed{0.25, 0.25, 0.25, 0.25}
	drawn := map[string]bool{}
	for _, k := range sim.DraftKinds() {
		drawn[k.String()] = true
	}
	for _, name := range draft.Names() {
		d, err := draft.New(draft.Config{Name: name, Q: q, Heads: []sim.Model{q, q}, K: 2, Depth: 2, Cands: [][]int{{1, 2}}, MaxNgram: 2})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		isChain := slices.Contains(draft.ChainNames(), name)
		if isChain != (d.Chain != nil) || isChain == (d.Tree != nil) {
			t.Errorf("%s: listed as chain %v, built chain %v tree %v", name, isChain, d.Chain != nil, d.Tree != nil)
		}
		if d.Tree == nil {
			continue
		}
		if k := d.Tree.Kind(); k.String() != strings.TrimSpace(k.String()) || strings.HasPrefix(k.String(), "DraftKind(") {
			t.Errorf("%s: unregistered kind %v", name, k)
		}
		if slices.Contains(draft.TreeNames(), name) != drawn[d.Tree.Kind().String()] {
			t.Errorf("%s: in TreeNames %v, but its kind %s drawn %v", name, slices.Contains(draft.TreeNames(), name), d.Tree.Kind(), drawn[d.Tree.Kind().String()])
		}
	}
}

// MaxK is what New accepts: every drafted tree drafter builds with K =
// min(MaxK, 4), and one declaring fewer than 64 refuses K = MaxK + 1 with
// an error naming k.
func TestMaxK(t *testing.T) {
	q := sim.Fixed{0.25, 0.25, 0.25, 0.25}
	limited := 0
	for _, name := range draft.TreeNames() {
		k := draft.KLimit(name)
		if k < 1 || k > 64 {
			t.Fatalf("%s: MaxK = %d", name, k)
		}
		if _, err := draft.New(draft.Config{Name: name, Q: q, K: min(k, 4), Depth: 2}); err != nil {
			t.Errorf("%s: K = %d refused: %v", name, min(k, 4), err)
		}
		if k == 64 {
			continue
		}
		limited++
		if _, err := draft.New(draft.Config{Name: name, Q: q, K: k + 1, Depth: 2}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("k = %d", k+1)) {
			t.Errorf("%s: K = %d above MaxK: err = %v", name, k+1, err)
		}
	}
	if limited == 0 {
		t.Error("no drafter declares a MaxK below 64 (hub drafts two)")
	}
}
