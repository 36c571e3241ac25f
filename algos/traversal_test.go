package algos

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/stattest"
)

// randomRow returns a seeded random distribution over v tokens with every
// entry positive (so every token can be drafted).
func randomRow(seed, i uint64, v int) []float64 {
	rng := sim.NewRand(seed, sim.StreamID("traversal-test/row", i))
	r := make([]float64, v)
	for x := range r {
		r[x] = 0.05 + rng.Float64()
	}
	sim.Normalize(r)
	return r
}

// TestTraversalChainIsBlock: on a single chain (k = 1) Traversal
// Verification has block verification's law given the draft. For
// several seeded random (p, q) with V = 3 and γ = 1..3, every chain of
// tokens is enumerated and the law of (accepted length, next token) of
// Traversal.TreeLaw is compared with Block.Law: total variation ≤ 1e-12
// on every chain.
func TestTraversalChainIsBlock(t *testing.T) {
	const v = 3
	var tl sim.TreeLaw
	var bl sim.Law
	for seed := uint64(1); seed <= 4; seed++ {
		for gamma := 1; gamma <= 3; gamma++ {
			p := make([][]float64, gamma+1)
			q := make([][]float64, gamma)
			for i := range p {
				p[i] = randomRow(seed, uint64(2*i), v)
				if i < gamma {
					q[i] = randomRow(seed, uint64(2*i+1), v)
				}
			}
			chains := 0
			for code := 0; code < int(math.Pow(v, float64(gamma))); code++ {
				toks := make([]int, gamma)
				for i, c := 0, code; i < gamma; i, c = i+1, c/v {
					toks[i] = c % v
				}
				b, tr := chainOf(toks, p, q)
				if err := (Block{}).Law(b, &bl); err != nil {
					t.Fatal(err)
				}
				if err := (Traversal{}).TreeLaw(tr, &tl); err != nil {
					t.Fatal(err)
				}
				tv := 0.0
				for n := 0; n <= gamma; n++ {
					for x := 0; x < v; x++ {
						tv += math.Abs(tl.At(n, x) - bl.At(n, x))
					}
				}
				if tv/2 > 1e-12 {
					t.Fatalf("seed %d γ=%d chain %v: TV(traversal, block) = %.3g", seed, gamma, toks, tv/2)
				}
				chains++
			}
			if chains != int(math.Pow(v, float64(gamma))) {
				t.Fatalf("enumerated %d chains", chains)
			}
		}
	}
}

// chainOf returns the block and the one-child-per-node tree of the chain
// toks with target rows p and draft rows q.
func chainOf(toks []int, p, q [][]float64) (*sim.Block, *sim.Tree) {
	b := &sim.Block{Tokens: toks, Ctx: -1}
	tr := &sim.Tree{}
	tr.Reset(len(p[0]))
	n := 0
	for i, x := range toks {
		b.Q = append(b.Q, sim.F64(q[i]))
		tr.SetQ(n, sim.F64(q[i]))
		tr.Nodes[n].P = sim.F64(p[i])
		n = tr.AddDraw(n, x)
	}
	for i := range p {
		b.P = append(b.P, sim.F64(p[i]))
	}
	tr.Nodes[n].P = sim.F64(p[len(toks)])
	tr.Cands = append(tr.Cands, n)
	return b, tr
}

// TestTraversalSamplerPaths: the sampler's shortcuts (a node with one
// child, a node of weight 1 with several) and its written-out path (a
// node of weight below 1 with several children) have the law TreeLaw
// computes. On three trees of each shape, branch (1,1,1), (3,1,1) and
// (2,2,1), drafted without replacement from a seeded Markov pair (V = 4),
// 20,000 AcceptTree outcomes are tested against TreeLaw by a pooled χ²
// test at level 1e-6 per tree (fixed seeds, so the test is deterministic
// at this commit).
func TestTraversalSamplerPaths(t *testing.T) {
	const n, level = 20000, 1e-6
	pair := treePair(t, 31, 4, 0.3)
	rng := sim.NewRand(9, sim.StreamID("traversal-test/mc", 0))
	for _, br := range [][]int{{1, 1, 1}, {3, 1, 1}, {2, 2, 1}} {
		d, err := draft.NewTree(sim.DraftWOR, draft.Config{Q: pair.Q, Branch: br})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			var tree sim.Tree
			sim.DraftTree(rng, d, pair.P, nil, &tree)
			var law sim.TreeLaw
			if err := (Traversal{}).TreeLaw(&tree, &law); err != nil {
				t.Fatal(err)
			}
			obs := make([]int64, len(law.P))
			for range n {
				o := (Traversal{}).AcceptTree(rng, &tree)
				obs[o.Node*(tree.V+1)+o.Next+1]++
			}
			res, err := stattest.ChiSquare(obs, law.P, 5)
			if err != nil {
				t.Fatal(err)
			}
			if res.PValue < level {
				t.Errorf("branch %v tree %d: sampler disagrees with the law: X² = %.1f, df %d, p = %.3g", br, i, res.Stat, res.DF, res.PValue)
			}
		}
	}
}
