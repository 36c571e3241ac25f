package draft

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/specsim/specsim/sim"
)

// Dynamic is EAGLE-2's dynamic draft tree (Li et al. 2024, arXiv
// 2406.16858): the tree grows layer by layer, and each layer keeps the K
// expansions of greatest path value, the product of the draft
// probabilities along the path:
//
//	V(path·x) = V(path) · q(x | ctx, path),  V(root) = 1,
//
// choosing among the top K tokens of every node of the previous layer
// (ties to the earlier parent, then the more likely token). Its children
// are deterministic functions of q, so it is verified by the rules for
// kind sim.DraftTopK; the candidates are the leaves. It draws no
// randomness and takes one draft forward pass per layer.
type Dynamic struct {
	q        sim.Model
	k, depth int
	tree     sim.Tree
}

// NewDynamic returns the dynamic tree of depth layers keeping k nodes per
// layer, drafted from q.
func NewDynamic(q sim.Model, k, depth int) (*Dynamic, error) {
	if q == nil {
		return nil, fmt.Errorf("drafter dynamic: no draft model")
	}
	if k < 1 || k > 64 {
		return nil, fmt.Errorf("drafter dynamic: k = %d; use 1 <= k <= 64", k)
	}
	if depth < 1 || depth > sim.MaxTreeDepth {
		return nil, fmt.Errorf("drafter dynamic: depth = %d; use 1 <= depth <= %d", depth, sim.MaxTreeDepth)
	}
	return &Dynamic{q: q, k: k, depth: depth}, nil
}

// DynamicName is the dynamic tree's name (New).
const DynamicName = "dynamic"

func init() {
	registerTree(DynamicName, treeTraits{drawn: true}, func(c Config) (Drafter, error) {
		d, err := NewDynamic(c.Q, c.K, c.Depth)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// Kind returns sim.DraftTopK: children chosen deterministically.
func (d *Dynamic) Kind() sim.DraftKind { return sim.DraftTopK }

// Depth returns the number of layers.
func (d *Dynamic) Depth() int { return d.depth }

// dynamicState is Dynamic's working storage: the path value of every
// node, the current and next layer, and the layer's expansions.
type dynamicState struct {
	val         []float64
	layer, next []int
	cands       []expansion
}

// expansion is a candidate child: token x under parent, of path value v.
type expansion struct {
	v         float64
	parent, x int
}

// Draft grows the tree into t.
func (d *Dynamic) Draft(_ *rand.Rand, ctx []int, t *sim.Tree) {
	st := stateOf(t)
	s := &st.dyn
	t.Reset(d.q.Vocab())
	s.val = append(s.val[:0], 1)
	s.layer = append(s.layer[:0], 0)
	for range d.depth {
		s.cands = s.cands[:0]
		for _, n := range s.layer {
			row := loadQ(d.q, t, ctx, n)
			st.order = topK(st.order[:0], row, d.k)
			for _, x := range st.order {
				s.cands = append(s.cands, expansion{s.val[n] * row[x], n, x})
			}
		}
		sort.SliceStable(s.cands, func(i, j int) bool { return s.cands[i].v > s.cands[j].v })
		s.next = s.next[:0]
		for _, c := range s.cands[:min(d.k, len(s.cands))] {
			n := t.AddDraw(c.parent, c.x)
			for len(s.val) <= n {
				s.val = append(s.val, 0)
			}
			s.val[n] = c.v
			s.next = append(s.next, n)
		}
		s.layer, s.next = s.next, s.layer
	}
	for i := range t.Nodes {
		if len(t.Nodes[i].Kids) == 0 && i > 0 {
			t.Cands = append(t.Cands, i)
		}
	}
}

// Enumerate visits the one tree Draft builds, with probability 1.
func (d *Dynamic) Enumerate(ctx []int, fn func(*sim.Tree, float64) error) error {
	d.Draft(nil, ctx, &d.tree)
	return fn(&d.tree, 1)
}

// topK appends the indices of the k largest entries of q with q > 0,
// largest first, ties to the lowest index: sim.TopTokens's order, by
// insertion into a sorted list of at most k (O(V·k) rather than a sort of
// V entries).
func topK(dst []int, q []float64, k int) []int {
	start := len(dst)
	for x, v := range q {
		if !(v > 0) {
			continue
		}
		n := len(dst) - start
		if n == k && v <= q[dst[len(dst)-1]] {
			continue
		}
		if n < k {
			dst = append(dst, x)
		} else {
			dst[len(dst)-1] = x
		}
		// bubble x up past strictly smaller entries (equal ones keep
		// their lower index first)
		for i := len(dst) - 1; i > start && q[dst[i-1]] < v; i-- {
			dst[i], dst[i-1] = dst[i-1], dst[i]
		}
	}
	return dst
}
