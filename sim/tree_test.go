package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim/stattest"
)

// treeKey renders a tree's draws node by node (canonical for a drafter).
func treeKey(t *Tree) string {
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

func testDrafters(t *testing.T) (Pair, []Drafter) {
	t.Helper()
	pair, err := NewMarkovPair(NewRand(3, StreamID("tree-test/pair")), MarkovConfig{V: 3, Order: 1, A: 0.8, Quality: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	var ds []Drafter
	for _, c := range []DrafterConfig{
		{Kind: DraftIID, Q: pair.Q, K: 2, Depth: 2},
		{Kind: DraftWOR, Q: pair.Q, Branch: []int{2, 2}},
		{Kind: DraftTopK, Q: pair.Q, Branch: []int{2, 1}},
		{Kind: DraftGreedy, Q: pair.Q, Branch: []int{2, 2}},
		{Kind: DraftFixed, Cands: [][]int{{0, 1}, {0, 2}, {1}}},
	} {
		d, err := NewDrafter(c)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	return pair, ds
}

// Enumerate's weights form a distribution over distinct trees, and Draft
// samples that distribution: 20 000 draws pass a χ² test at level 1e-6
// (fixed seed; per-assertion false-failure rate 1e-6).
func TestDraftersMatchEnumeration(t *testing.T) {
	pair, ds := testDrafters(t)
	for _, d := range ds {
		t.Run(d.Kind().String(), func(t *testing.T) {
			weights := map[string]float64{}
			total := 0.0
			err := d.Enumerate(nil, func(tr *Tree, w float64) error {
				k := treeKey(tr)
				if _, dup := weights[k]; dup {
					return fmt.Errorf("tree %s enumerated twice", k)
				}
				weights[k] = w
				total += w
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(total-1) > 1e-12 {
				t.Fatalf("weights sum to %.15g", total)
			}
			keys := make([]string, 0, len(weights))
			for k := range weights {
				keys = append(keys, k)
			}
			idx := map[string]int{}
			probs := make([]float64, len(keys))
			for i, k := range keys {
				idx[k] = i
				probs[i] = weights[k]
			}
			obs := make([]int64, len(keys))
			rng := NewRand(1, StreamID("tree-test/draft", uint64(d.Kind())))
			var tr Tree
			for range 20000 {
				DraftTree(rng, d, pair.P, nil, &tr)
				if err := tr.Check(); err != nil {
					t.Fatal(err)
				}
				i, ok := idx[treeKey(&tr)]
				if !ok {
					t.Fatalf("drafted tree %s is not enumerated", treeKey(&tr))
				}
				obs[i]++
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

// Shapes: k i.i.d. chains keep k candidates (repeats merged into one node
// but listed twice); a fixed list becomes a trie in candidate order;
// top-k children are the largest q entries, ties to the lowest index.
func TestTreeShapes(t *testing.T) {
	d, _ := NewFixedDrafter([][]int{{0, 1}, {0, 2}, {0, 3}, {4, 5}})
	var tr Tree
	DraftTree(NewRand(1, 1), d, Fixed{0.5, 0, 0, 0, 0.5, 0, 0}, nil, &tr)
	if len(tr.Nodes) != 7 || len(tr.Nodes[0].Kids) != 2 || len(tr.Cands) != 4 || tr.Nodes[tr.Cands[3]].Depth != 2 {
		t.Fatalf("fms trie: %d nodes, root kids %v, cands %v", len(tr.Nodes), tr.Nodes[0].Kids, tr.Cands)
	}
	if got := tr.Path(nil, tr.Cands[1]); got[0] != 0 || got[1] != 2 {
		t.Errorf("candidate 1 path %v, want [0 2]", got)
	}
	if got := TopTokens(nil, []float64{0.2, 0.3, 0.2, 0.3, 0}, 3); fmt.Sprint(got) != "[1 3 0]" {
		t.Errorf("TopTokens = %v, want [1 3 0]", got)
	}
	if got := TopTokens(nil, []float64{0.5, 0, 0.5}, 3); fmt.Sprint(got) != "[0 2]" {
		t.Errorf("TopTokens skips q = 0: got %v", got)
	}
	iid, _ := NewDrafter(DrafterConfig{Kind: DraftIID, Q: Fixed{1, 0}, K: 3, Depth: 1})
	DraftTree(NewRand(1, 1), iid, Fixed{0.5, 0.5}, nil, &tr)
	if len(tr.Nodes) != 2 || len(tr.Nodes[0].Draws) != 3 || len(tr.Cands) != 3 {
		t.Errorf("three equal i.i.d. draws: %d nodes, draws %v, cands %v", len(tr.Nodes), tr.Nodes[0].Draws, tr.Cands)
	}
}

// Bad drafter configurations are errors naming the field.
func TestDrafterErrors(t *testing.T) {
	q := Fixed{0.5, 0.5}
	for _, c := range []DrafterConfig{
		{Kind: DraftIID, Q: q, K: 0, Depth: 1},
		{Kind: DraftIID, Q: q, K: 2, Depth: 0},
		{Kind: DraftWOR, Q: q, Branch: []int{0}},
		{Kind: DraftTopK, Q: nil, K: 1, Depth: 1},
		{Kind: DraftFixed},
		{Kind: DraftFixed, Cands: [][]int{{}}},
	} {
		if _, err := NewDrafter(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
