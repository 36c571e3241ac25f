package seq

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/specsim/specsim/sim"
)

// treeDrafter builds draft trees after a context: the EAGLE-2 dynamic tree
// for rules over deterministic top-k children, the sim drafter of the
// rule's kind otherwise.
type treeDrafter struct {
	q     sim.Model
	kind  sim.DraftKind
	k     int
	fixed sim.Drafter // nil for the dynamic tree
}

func newTreeDrafter(q sim.Model, kind sim.DraftKind, k, depth int) (*treeDrafter, error) {
	if k < 1 || k > 64 {
		return nil, fmt.Errorf("tree: k = %d; use 1 <= k <= 64", k)
	}
	if depth < 1 || depth > sim.MaxTreeDepth {
		return nil, fmt.Errorf("tree: depth (gamma) = %d; use 1 <= gamma <= %d", depth, sim.MaxTreeDepth)
	}
	td := &treeDrafter{q: q, kind: kind, k: k}
	switch kind {
	case sim.DraftTopK:
		return td, nil
	case sim.DraftIID, sim.DraftWOR, sim.DraftGreedy:
		d, err := sim.NewDrafter(sim.DrafterConfig{Kind: kind, Q: q, K: k, Depth: depth})
		if err != nil {
			return nil, err
		}
		td.fixed = d
		return td, nil
	}
	return nil, fmt.Errorf("tree: rules for %s drafts have no drafter in generate; use a rule for iid, wor, topk or greedy drafts", kind)
}

// treeScratch is a worker's tree state.
type treeScratch struct {
	t     sim.Tree
	rows  [][]float64
	val   []float64
	layer []int
	next  []int
	order []int
	cands []treeCand
	path  []int
}

type treeCand struct {
	v         float64
	parent, x int
}

// draft builds the tree after ctx (target rows not filled) and returns the
// draft forward passes (one per layer).
func (d *treeDrafter) draft(rng *rand.Rand, s *treeScratch, ctx []int, depth int) int {
	if d.fixed != nil {
		d.fixed.Draft(rng, ctx, &s.t)
		return depth
	}
	v := d.q.Vocab()
	t := &s.t
	t.Reset(v)
	s.val = append(s.val[:0], 1)
	s.layer = append(s.layer[:0], 0)
	for dep := 0; dep < depth; dep++ {
		s.cands = s.cands[:0]
		for _, n := range s.layer {
			for len(s.rows) <= n {
				s.rows = append(s.rows, make([]float64, v))
			}
			row := s.rows[n]
			s.path = t.Path(append(s.path[:0], ctx...), n)
			d.q.Next(s.path, row)
			t.Nodes[n].Q = sim.F64(row)
			s.order = topK(s.order[:0], row, d.k)
			for _, x := range s.order {
				s.cands = append(s.cands, treeCand{s.val[n] * row[x], n, x})
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
	return depth
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
