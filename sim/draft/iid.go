package draft

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// IID drafts K chains of Depth tokens i.i.d. from the draft model, each
// autoregressively,
//
//	x_{j,i} ~ q(. | ctx, x_{j,<i}),  j = 1..K,
//
// merged into a trie: a node's Draws are the next tokens of the chains
// through it, in chain order, so a token drawn by two chains appears
// twice (with replacement). These are the drafts of SpecInfer (Miao et
// al. 2023, arXiv 2305.09781) and SpecTr (Sun et al. 2023, arXiv
// 2310.15141); kind sim.DraftIID.
type IID struct {
	q        sim.Model
	k, depth int
	tree     sim.Tree
}

// NewIID returns the drafter of k i.i.d. chains of depth tokens from q.
func NewIID(q sim.Model, k, depth int) (*IID, error) {
	if q == nil {
		return nil, fmt.Errorf("drafter iid: no draft model")
	}
	if k < 1 || k > 64 {
		return nil, fmt.Errorf("drafter iid: k = %d; use 1 <= k <= 64", k)
	}
	if depth < 1 || depth > sim.MaxTreeDepth {
		return nil, fmt.Errorf("drafter iid: depth = %d; use 1 <= depth <= %d", depth, sim.MaxTreeDepth)
	}
	return &IID{q: q, k: k, depth: depth}, nil
}

func init() {
	registerTree(sim.DraftIID.String(), treeTraits{drawn: true, repeats: true}, func(c Config) (Drafter, error) {
		d, err := NewIID(c.Q, c.K, c.Depth)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// Kind returns sim.DraftIID.
func (d *IID) Kind() sim.DraftKind { return sim.DraftIID }

// Depth returns the chains' length.
func (d *IID) Depth() int { return d.depth }

// qAt loads node n's draft row unless a chain through n already did.
func (d *IID) qAt(t *sim.Tree, ctx []int, n int) { qView(d.q, t, ctx, n) }

// qView loads node n's draft row from q unless it is loaded: borrowed
// from a model that stores its rows (the chains only read it), else
// copied.
func qView(q sim.Model, t *sim.Tree, ctx []int, n int) {
	if !t.Nodes[n].Q.IsZero() {
		return
	}
	if rv, ok := q.(sim.RowViewer); ok {
		s := stateOf(t)
		s.path = t.Path(append(s.path[:0], ctx...), n)
		t.SetQ(n, rv.RowView(s.path))
		return
	}
	loadQ(q, t, ctx, n)
}

// Draft draws the K chains into t, each token by inverse CDF from one
// rng.Float64.
func (d *IID) Draft(rng *rand.Rand, ctx []int, t *sim.Tree) {
	t.Reset(d.q.Vocab())
	d.drawChains(rng, ctx, t, 0)
}

// drawChains draws the K chains of Depth tokens from node start (the
// root, or the branching node of a delayed tree) and adds their ends to
// the candidates.
func (d *IID) drawChains(rng *rand.Rand, ctx []int, t *sim.Tree, start int) {
	for range d.k {
		n := start
		for range d.depth {
			d.qAt(t, ctx, n)
			n = t.AddDraw(n, sim.SampleRow(rng.Float64(), t.Nodes[n].Q))
		}
		t.Cands = append(t.Cands, n)
	}
}

// Enumerate visits every ordered K-tuple of chains with its probability,
// the product of q over the drawn tokens.
func (d *IID) Enumerate(ctx []int, fn func(*sim.Tree, float64) error) error {
	t := &d.tree
	t.Reset(d.q.Vocab())
	return d.enumChains(ctx, t, 0, 1, fn)
}

// enumChains visits every ordered K-tuple of chains from node start of t,
// each with w0 times its probability.
func (d *IID) enumChains(ctx []int, t *sim.Tree, start int, w0 float64, fn func(*sim.Tree, float64) error) error {
	var rec func(chain, depth, n int, w float64) error
	rec = func(chain, depth, n int, w float64) error {
		if depth == d.depth {
			t.Cands = append(t.Cands, n)
			var err error
			if chain+1 == d.k {
				err = fn(t, w)
			} else {
				err = rec(chain+1, 0, start, w)
			}
			t.Cands = t.Cands[:len(t.Cands)-1]
			return err
		}
		d.qAt(t, ctx, n)
		q := t.Nodes[n].Q
		for x := 0; x < q.Len(); x++ {
			qx := q.At(x)
			if qx <= 0 {
				continue
			}
			created := t.Child(n, x) < 0
			c := t.AddDraw(n, x)
			err := rec(chain, depth+1, c, w*qx)
			t.UndoDraw(n, created)
			if err != nil {
				return err
			}
		}
		return nil
	}
	return rec(0, 0, start, w0)
}

// EstimateTrees returns s^(K·Depth) for the support s of the root's row:
// exact when every row has the root's support.
func (d *IID) EstimateTrees(ctx []int) float64 {
	s := rootSupport(d.q, ctx)
	return math.Exp(float64(d.k*d.depth) * math.Log(float64(s)))
}

// rootSupport returns the number of tokens with q > 0 after ctx.
func rootSupport(q sim.Model, ctx []int) int {
	row := make([]float64, q.Vocab())
	q.Next(ctx, row)
	return sim.Support(row)
}

// nilIfErr returns d as a sim.Drafter, or nil when err is set (so a
// failed constructor does not hand New a typed nil).
func nilIfErr[D sim.Drafter](d D, err error) sim.Drafter {
	if err != nil {
		return nil
	}
	return d
}
