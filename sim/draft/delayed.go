package draft

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

// DraftDelayed is the kind of the delayed tree expansion drafter
// (Delayed), registered here so that sim needs no edit.
var DraftDelayed = sim.RegisterDraftKind("delayed", true)

// Delayed is delayed tree expansion, Thomas, Kitanovski, Goldblum and Pal,
// "Dynamic Delayed Tree Expansion for Improved Multi-Path Speculative
// Decoding" (arXiv 2602.16994, §5, Definition 5.2): a random
// (K, L1, L2)-delayed tree drafts a single path of L1 = Delay tokens,
//
//	a_i ~ q(. | ctx, a_{<i}),  i = 1..L1,
//
// and then branches into K chains of L2 = Depth − L1 tokens drawn i.i.d.
// from q(. | ctx, a_{1:L1}) on, merged into a trie as IID merges them
// (child lists have duplicates after the branching node, not before).
// Delay = 0 is IID's tree; Delay = Depth is a single chain.
//
// Every node's draws are i.i.d. from q given its path (one draw on the
// path, K at the branching node, one per chain below), so the rules that
// are lossless for i.i.d. drafts at every node (specinfer, kseq) stay
// lossless on it, as §5 says of OT-based verifiers; `simulate exact
// --draft delayed --delay L1` proves it on a small pair. Its shape is set
// by K, Depth and Delay; it does not read Branch (children per depth),
// which New refuses for it. The paper's neural selector of (K, L1, L2)
// is not part of it. Kind DraftDelayed.
type Delayed struct {
	q            sim.Model
	delay, depth int
	chains       *IID // nil when Delay = Depth
	tree         sim.Tree
}

// NewDelayed returns the drafter of a path of delay tokens from q and then
// k i.i.d. chains to depth.
func NewDelayed(q sim.Model, k, depth, delay int) (*Delayed, error) {
	if q == nil {
		return nil, fmt.Errorf("drafter %s: no draft model", DraftDelayed)
	}
	if k < 1 || k > 64 || depth < 1 || depth > sim.MaxTreeDepth {
		return nil, fmt.Errorf("drafter %s: k = %d, depth = %d; use 1 <= k <= 64 and 1 <= depth <= %d", DraftDelayed, k, depth, sim.MaxTreeDepth)
	}
	if delay < 0 || delay > depth {
		return nil, diag.Param("delay", " = %d is outside [0, depth = %d]: the single path before the %d chains branch is at most the tree's depth; use 0 <= delay <= depth", delay, depth, k)
	}
	d := &Delayed{q: q, delay: delay, depth: depth}
	if delay < depth {
		c, err := NewIID(q, k, depth-delay)
		if err != nil {
			return nil, err
		}
		d.chains = c
	}
	return d, nil
}

func init() {
	registerTree(DraftDelayed.String(), treeTraits{drawn: true, delays: true, repeats: true}, func(c Config) (Drafter, error) {
		d, err := NewDelayed(c.Q, c.K, c.Depth, c.Delay)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// Kind returns DraftDelayed.
func (d *Delayed) Kind() sim.DraftKind { return DraftDelayed }

// Depth returns the trees' depth, path and chains together.
func (d *Delayed) Depth() int { return d.depth }

// Delay returns the length of the single path.
func (d *Delayed) Delay() int { return d.delay }

// Draft draws the path and then the chains into t, each token by inverse
// CDF from one rng.Float64.
func (d *Delayed) Draft(rng *rand.Rand, ctx []int, t *sim.Tree) {
	t.Reset(d.q.Vocab())
	n := 0
	for range d.delay {
		qView(d.q, t, ctx, n)
		n = t.AddDraw(n, sim.SampleRow(rng.Float64(), t.Nodes[n].Q))
	}
	if d.chains == nil {
		t.Cands = append(t.Cands, n)
		return
	}
	d.chains.drawChains(rng, ctx, t, n)
}

// Enumerate visits every path and, below it, every ordered K-tuple of
// chains, with its probability (the product of q over the drawn tokens).
func (d *Delayed) Enumerate(ctx []int, fn func(*sim.Tree, float64) error) error {
	t := &d.tree
	t.Reset(d.q.Vocab())
	var rec func(n, depth int, w float64) error
	rec = func(n, depth int, w float64) error {
		if depth == d.delay {
			if d.chains != nil {
				return d.chains.enumChains(ctx, t, n, w, fn)
			}
			t.Cands = append(t.Cands, n)
			err := fn(t, w)
			t.Cands = t.Cands[:len(t.Cands)-1]
			return err
		}
		qView(d.q, t, ctx, n)
		q := t.Nodes[n].Q
		for x := 0; x < q.Len(); x++ {
			if qx := q.At(x); qx > 0 {
				c := t.AddDraw(n, x)
				err := rec(c, depth+1, w*qx)
				t.UndoDraw(n, true)
				if err != nil {
					return err
				}
			}
		}
		return nil
	}
	return rec(0, 0, 1)
}

// EstimateTrees returns s^(Delay + K·(Depth − Delay)) for the support s of
// the root's row: exact when every row has the root's support.
func (d *Delayed) EstimateTrees(ctx []int) float64 {
	s := rootSupport(d.q, ctx)
	draws := d.delay
	if d.chains != nil {
		draws += d.chains.k * d.chains.depth
	}
	return math.Exp(float64(draws) * math.Log(float64(s)))
}
