package draft

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// branching is what the drafters whose every node at depth i gets
// branch[i] children (WOR, TopK, Greedy) share: the shape, the
// breadth-first walk that drafts and enumerates, and the estimate of the
// trees; children (in the kind's file) chooses the children of one node.
type branching struct {
	kind   sim.DraftKind
	q      sim.Model
	branch []int
	pick   children
	tree   sim.Tree
}

// children chooses the children of one node of a branching tree from its
// draft row q.
type children interface {
	// draw adds node n's b children to t, drawing from rng.
	draw(rng *rand.Rand, t *sim.Tree, n int, q []float64, b int)
	// each calls next once for every choice of node n's b children, with
	// w times the choice's probability, the children added to t for the
	// call and removed after it.
	each(t *sim.Tree, n int, q []float64, b int, w float64, next func(w float64) error) error
	// logWays returns the log of the number of choices at a node whose row
	// has s tokens with q > 0, for b children (b <= s).
	logWays(s, b int) float64
}

// newBranching checks the shape (K children of the root and chains of
// Depth when branch is nil) and returns the drafter.
func newBranching(kind sim.DraftKind, q sim.Model, k, depth int, branch []int, pick children) (*branching, error) {
	if q == nil {
		return nil, fmt.Errorf("drafter %s: no draft model", kind)
	}
	br := branch
	if br == nil {
		if k < 1 || depth < 1 || depth > sim.MaxTreeDepth {
			return nil, fmt.Errorf("drafter %s: k = %d, depth = %d; use k >= 1 and 1 <= depth <= %d", kind, k, depth, sim.MaxTreeDepth)
		}
		br = make([]int, depth)
		for i := range br {
			br[i] = 1
		}
		br[0] = k
	}
	if len(br) < 1 || len(br) > sim.MaxTreeDepth {
		return nil, fmt.Errorf("drafter %s: %d branching factors; give 1 to %d", kind, len(br), sim.MaxTreeDepth)
	}
	nodes := 1
	for i, b := range br {
		if b < 1 || b > 64 {
			return nil, fmt.Errorf("drafter %s: branch[%d] = %d; use 1 <= branch <= 64 (a node never gets more children than q has tokens with q > 0)", kind, i, b)
		}
		b = min(b, q.Vocab())
		nodes *= b
	}
	if nodes > sim.MaxTreeNodes/2 {
		return nil, fmt.Errorf("drafter %s: branching %v gives too many nodes; keep the product below %d", kind, br, sim.MaxTreeNodes/2)
	}
	return &branching{kind: kind, q: q, branch: append([]int(nil), br...), pick: pick}, nil
}

// Kind returns how children are chosen.
func (d *branching) Kind() sim.DraftKind { return d.kind }

// Depth returns the number of branching factors.
func (d *branching) Depth() int { return len(d.branch) }

// Branch returns a copy of the children per depth.
func (d *branching) Branch() []int { return append([]int(nil), d.branch...) }

// Draft builds the tree breadth-first: every node above the last depth
// gets its children chosen from q(.|ctx, path); the leaves are the
// candidates.
func (d *branching) Draft(rng *rand.Rand, ctx []int, t *sim.Tree) {
	t.Reset(d.q.Vocab())
	for n := 0; n < len(t.Nodes); n++ {
		dep := t.Nodes[n].Depth
		if dep == len(d.branch) {
			t.Cands = append(t.Cands, n)
			continue
		}
		d.pick.draw(rng, t, n, loadQ(d.q, t, ctx, n), d.branch[dep])
	}
}

// Enumerate visits every tree with its probability, node by node in the
// breadth-first order Draft builds them.
func (d *branching) Enumerate(ctx []int, fn func(*sim.Tree, float64) error) error {
	t := &d.tree
	t.Reset(d.q.Vocab())
	var rec func(n int, w float64) error
	rec = func(n int, w float64) error {
		if n == len(t.Nodes) {
			return fn(t, w)
		}
		if t.Nodes[n].Depth == len(d.branch) {
			t.Cands = append(t.Cands, n)
			err := rec(n+1, w)
			t.Cands = t.Cands[:len(t.Cands)-1]
			return err
		}
		// a copy: the nodes below n reuse the tree's row storage
		q := append([]float64(nil), loadQ(d.q, t, ctx, n)...)
		return d.pick.each(t, n, q, d.branch[t.Nodes[n].Depth], w, func(w float64) error { return rec(n+1, w) })
	}
	return rec(0, 1)
}

// EstimateTrees multiplies the choices of every node, taking each node's
// row to have the support s of the root's: exact when every row does.
// Computed in logarithms, so it saturates at +Inf instead of overflowing.
func (d *branching) EstimateTrees(ctx []int) float64 {
	s := rootSupport(d.q, ctx)
	logN, nodes := 0.0, 1.0
	for _, b := range d.branch {
		b = min(b, s)
		logN += nodes * d.pick.logWays(s, b)
		nodes *= float64(b)
	}
	return math.Exp(logN)
}

// sampleExcluding returns the inverse-CDF sample at target of q with the
// children of node n removed (target in [0, remaining mass)).
func sampleExcluding(target float64, q []float64, t *sim.Tree, n int) int {
	c := 0.0
	last := -1
	for x, v := range q {
		if v <= 0 || t.Child(n, x) >= 0 {
			continue
		}
		c += v
		last = x
		if c > target {
			return x
		}
	}
	return last
}
