package draft

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Fixed proposes the same candidate sequences every time, merged into a
// trie (candidate order kept), with no draft probabilities: the output of
// a speculator whose candidates are given rather than drawn, such as the
// fms-extras MLP speculator (IBM foundation-model-stack/fms-extras, issue
// #12: candidates "a b", "a c", "a d", "e f"); kind sim.DraftFixed. Its trees' vocabulary is
// set by the target when they are filled, so Tree.Check checks the tokens.
type Fixed struct {
	cands [][]int
	v     int
	depth int
	tree  sim.Tree
}

// NewFixed returns the drafter that always proposes cands.
func NewFixed(cands [][]int) (*Fixed, error) {
	if len(cands) == 0 {
		return nil, fmt.Errorf("drafter fixed: no candidates; give at least one token sequence")
	}
	d := &Fixed{}
	for i, c := range cands {
		if len(c) == 0 || len(c) > sim.MaxTreeDepth {
			return nil, fmt.Errorf("drafter fixed: candidate %d has %d tokens; use 1 to %d", i, len(c), sim.MaxTreeDepth)
		}
		for _, x := range c {
			if x < 0 {
				return nil, fmt.Errorf("drafter fixed: candidate %d has a negative token %d", i, x)
			}
			d.v = max(d.v, x+1)
		}
		d.depth = max(d.depth, len(c))
		d.cands = append(d.cands, append([]int(nil), c...))
	}
	return d, nil
}

func init() {
	registerTree(sim.DraftFixed.String(), treeTraits{}, func(c Config) (Drafter, error) {
		d, err := NewFixed(c.Cands)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// Kind returns sim.DraftFixed.
func (d *Fixed) Kind() sim.DraftKind { return sim.DraftFixed }

// Depth returns the longest candidate's length.
func (d *Fixed) Depth() int { return d.depth }

// build makes the trie with vocabulary v.
func (d *Fixed) build(t *sim.Tree, v int) {
	t.Reset(v)
	for _, c := range d.cands {
		n := 0
		for _, x := range c {
			if k := t.Child(n, x); k >= 0 {
				n = k
			} else {
				n = t.AddDraw(n, x)
			}
		}
		t.Cands = append(t.Cands, n)
	}
}

// Draft builds the trie; it draws no randomness.
func (d *Fixed) Draft(_ *rand.Rand, _ []int, t *sim.Tree) { d.build(t, d.v) }

// Enumerate visits the one trie with probability 1.
func (d *Fixed) Enumerate(_ []int, fn func(*sim.Tree, float64) error) error {
	d.build(&d.tree, d.v)
	return fn(&d.tree, 1)
}
