package algos

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/specsim/specsim/sim"
)

// MultipathBlock is greedy multi-path block verification (GBV): Thomas
// and Pal, "Greedy Multi-Path Block Verification for Faster Decoding in
// Speculative Sampling" (arXiv 2602.16961, 2026). Block verification
// (Block; Sun et al., arXiv 2403.10444) of one path chosen among the k
// i.i.d. draft paths, against the law of the chosen path.
//
// What was read, and from where. The paper's body was not in the
// reference corpora here: only its abstract (the arXiv page), the three
// OpenReview reviews of its ICLR 2026 submission and the README of the
// authors' reference implementation (its verifier.py, which holds gbv,
// was not found). The reviews say that the multi-path LP decomposes into
// a randomised path selection, which induces a "skewed draft", followed
// by single-path block verification of the selected path, and that GBV
// is the greedy member of that class, ranking paths tree-locally with
// on-path probabilities only (the reviews name Definition 3.1, Theorems
// 3.3 and 3.4 for the single-path part and Theorem 4.6 for the
// multi-path one; their text was not read). The selection rule and the
// skewed law below are the ones two public re-implementations attribute
// to the paper (a K-path GBV kernel whose tests enumerate the selected
// path's law with exact fractions, and a GBV distillation loss); they
// agree on both, except that one ranks by min(1, p/q) and the other by
// p/q: this file ranks by p/q, ties to the larger token, and whether the
// paper clips the ratio was not read. Losslessness does not depend on
// the ranking: any order of the tokens at each node gives a selected
// path whose law is the one below, and block verification is lossless
// for any draft law it is told.
//
// The rule, on a tree of k i.i.d. chains of depth d (sim.DraftIID;
// k = len(root.Draws)). At a node with rows P, Q, token y ranks by the
// key (P(y)/Q(y), y), compared lexicographically. A delayed tree
// (arXiv 2602.16994: one chain, then k i.i.d. chains from the node where
// it branches) is taken the same way from that node, its first node
// drawn more than once; above it s = q, the trunk being one draw.
//
//  1. Selection: from the root, step to the child of largest key until
//     a leaf. This is the lexicographically largest of the k paths, its
//     prefix of length i the largest of their length-i prefixes.
//
//  2. The selected path's law. With Q(x_{1:i}) = Π_j q_j(x_j) and
//     F⁻(x_{1:i}) the draft mass of the length-i prefixes ranked below
//     x_{1:i}, F⁺ = F⁻ + Q, the largest of k i.i.d. prefixes is x_{1:i}
//     with probability F⁺(x_{1:i})^k − F⁻(x_{1:i})^k, so the selected
//     path's conditional at depth i is
//
//     s_i(y) = [F⁺(x_{<i}y)^k − F⁻(x_{<i}y)^k] / [F⁺(x_{<i})^k − F⁻(x_{<i})^k],
//
//     where F⁻(x_{<i}y) = F⁻(x_{<i}) + Q(x_{<i})·L(y) and L(y) is the
//     mass of q_i on the tokens ranked below y. Dividing by F⁺(x_{<i})
//     (β = F⁻/F⁺ and ρ = Q/F⁺ = 1 − β of x_{<i}; β = 0, ρ = 1 at the
//     root) and factoring a^k − c^k = (a − c)·Σ_j a^j c^{k−1−j}:
//
//     s_i(y) = q_i(y) · Σ_{j<k} A^j C^{k−1−j} / Σ_{j<k} β^j,
//     A = β + ρ·(L(y) + q_i(y)),  C = β + ρ·L(y),
//
//     a sum of positive terms in [0, 1], free of the cancellation the
//     difference of powers suffers on deep prefixes. After x_i,
//     β ← C/A and ρ ← ρ·q_i(x_i)/A at y = x_i. For k = 1, s_i = q_i.
//
//  3. Block verification (Block, lazy form) of x_1..x_d with target rows
//     P of the path's nodes and draft rows s_1..s_d: weights
//     w_i = min(w_{i−1}·p_i(x_i)/s_i(x_i), 1), thresholds
//     h_i = Z_i/(Z_i + 1 − w_i), Z_i = Σ_y (w_i·p_i(y) − s_i(y))+, the
//     longest prefix passing, and the next token from
//     norm((w_τ·p_τ − s_τ)+) (p_d at a full accept).
//
// Lossless: the selected path has law s exactly (step 2) and block
// verification emits the target's law for a path drawn from any draft
// law whose conditionals it uses (Sun et al., Thm 1). The exact engine
// checks it (TestMultipathBlockLossless); on one chain (k = 1) the rule
// is Block (TestMultipathBlockChainIsBlock).
//
// Cost: the law (TreeLaw) sorts the tokens with q > 0 by key at every
// depth and writes the rows s out before verifying; the sampler
// (AcceptTree, multipath_fast.go) makes one pass per depth for s(x_i)
// and, where the lazy form needs Z_i, one to bucket the keys and one to
// gather the tokens of the few buckets it sorts, and draws the residual's
// token in key order.
// Randomness: Block's, d uniforms and one for the next token.
type MultipathBlock struct {
	// plainQ is the planted bug of the mutant multipath-block-plainq: the
	// selected path is verified against q, as if it had not been
	// selected among k.
	plainQ bool
}

func init() {
	RegisterTree(TreeEntry{Info: Info{Name: "multipath-block", Summary: "greedy multi-path block verification (GBV): the path of largest p/q ranks among k i.i.d. chains, block-verified against its selection law",
		Paper: "Thomas & Pal 2026, arXiv 2602.16961 (abstract, reviews; rule as re-implemented, see doc)",
		Draft: sim.DraftIID, NeedsQ: true}, New: treeNoParams(MultipathBlock{})})
	RegisterTree(TreeEntry{Info: Info{Name: "multipath-block-plainq", Mutant: true, Summary: "multipath-block verifying the selected path against q instead of its selection law (the skew left out)",
		Paper: "planted here: step 2 of multipath-block left out",
		Draft: sim.DraftIID, NeedsQ: true}, New: treeNoParams(MultipathBlock{plainQ: true})})
}

// gbvKey returns the ranking key of token x at a node with rows p, q:
// p(x)/q(x). Selection and the skewed rows call it alike, so the two
// orders agree bit for bit.
func gbvKey(p, q sim.Row, x int) float64 { return p.At(x) / q.At(x) }

// gbvCmp orders tokens a, b of keys ka, kb: by key, then by token.
func gbvCmp(ka float64, a int, kb float64, b int) int {
	if c := cmp.Compare(ka, kb); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// gbvPath is the selected path of one tree: its nodes from the root and
// the block of its rows (Q[i] the skewed row s_{i+1}, in the tree's
// scratch).
type gbvPath struct {
	nodes [sim.MaxTreeDepth + 1]int
	toks  [sim.MaxTreeDepth]int
	q     [sim.MaxTreeDepth]sim.Row
	p     [sim.MaxTreeDepth + 1]sim.Row
	b     sim.Block
}

// prepare selects the path of t and writes its skewed rows. It returns
// an error where a node on the path has no draft row.
func (r MultipathBlock) prepare(t *sim.Tree, g *gbvPath) error {
	k := 0 // the chains' count, from the first node drawn more than once
	n, d := 0, 0
	g.nodes[0] = 0
	beta, rho := 0.0, 1.0
	for len(t.Nodes[n].Kids) > 0 {
		nd := &t.Nodes[n]
		if nd.Q.IsZero() {
			return errNoQ(n)
		}
		c := gbvChild(t, n)
		x := t.Nodes[c].Token
		g.toks[d], g.p[d] = x, nd.P
		if k == 0 && len(nd.Draws) > 1 {
			k = len(nd.Draws)
		}
		if r.plainQ || k <= 1 {
			g.q[d] = nd.Q
		} else {
			s := t.Scratch(d)
			beta, rho = gbvSkew(s, nd.P, nd.Q, k, beta, rho, x)
			g.q[d] = sim.F64(s)
			if _, f := nd.P.Data(); f == nil { // float32 rows: p beside s in float64
				pr := t.Scratch(sim.MaxTreeDepth + d)
				loadRow(pr, nd.P)
				g.p[d] = sim.F64(pr)
			}
		}
		d++
		n = c
		g.nodes[d] = n
	}
	g.p[d] = t.Nodes[n].P
	g.b = sim.Block{Tokens: g.toks[:d], Q: g.q[:d], P: g.p[:d+1], Ctx: t.Ctx}
	return nil
}

// gbvChild returns the child of node n of largest key (step 1).
func gbvChild(t *sim.Tree, n int) int {
	nd := &t.Nodes[n]
	c := nd.Kids[0]
	for _, o := range nd.Kids[1:] {
		xc, xo := t.Nodes[c].Token, t.Nodes[o].Token
		if gbvCmp(gbvKey(nd.P, nd.Q, xo), xo, gbvKey(nd.P, nd.Q, xc), xc) > 0 {
			c = o
		}
	}
	return c
}

// errNoQ is the error of a path node n without a draft row.
func errNoQ(n int) error {
	return fmt.Errorf("multipath-block: node %d has no draft row q: the rule needs drafts drawn from q", n)
}

// gbvOrder holds the sort scratch of gbvSkew: mentored decoding's
// (sortByRatio), an item per token with r the key, q its draft
// probability and c the token.
var gbvOrder = sync.Pool{New: func() any { return new(mscratch) }}

// gbvSorted returns the tokens with q > 0 as items sorted by gbvCmp:
// collected by increasing token, then sorted stably by key.
func gbvSorted(ms *mscratch, p, q sim.Row) []item {
	ms.it = ms.it[:0]
	for y := range q.Len() {
		if qy := q.At(y); qy > 0 {
			ms.it = append(ms.it, item{r: gbvKey(p, q, y), q: qy, c: float64(y)})
		}
	}
	if len(ms.it) < radixMin {
		slices.SortFunc(ms.it, func(a, b item) int { return gbvCmp(a.r, int(a.c), b.r, int(b.c)) })
	} else {
		ms.sortByRatio() // stable, so ties stay in token order
	}
	return ms.it
}

// gbvSkew writes the selected path's conditional s (step 2 of
// MultipathBlock) at a node of rows p, q into s, given β and ρ of the
// prefix and k paths, and returns β and ρ after the selected token x.
func gbvSkew(s []float64, p, q sim.Row, k int, beta, rho float64, x int) (float64, float64) {
	ms := gbvOrder.Get().(*mscratch)
	defer gbvOrder.Put(ms)
	order := gbvSorted(ms, p, q)
	den, bp := 0.0, 1.0
	for range k {
		den += bp
		bp *= beta
	}
	clear(s)
	var nb, nr float64
	low, sum := 0.0, 0.0
	for _, it := range order {
		a, c := beta+rho*(low+it.q), beta+rho*low
		if int(it.c) == x {
			nb, nr = c/a, rho*it.q/a
		}
		h, cp := 0.0, 1.0 // Σ_{j<k} A^j C^{k-1-j} by Horner in A
		for range k {
			h = h*a + cp
			cp *= c
		}
		v := it.q * h / den
		s[int(it.c)] = v
		sum += v
		low += it.q
	}
	if sum > 0 {
		for _, it := range order {
			s[int(it.c)] /= sum
		}
	}
	return nb, nr
}

// AcceptTree runs one step.
// It does not write the skewed rows: see multipath_fast.go.
func (r MultipathBlock) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	o, err := r.accept(rng, t)
	if err != nil {
		// A tree without draft rows: the registry's NeedsQ keeps such
		// trees from a tree rule, so this is a programming error.
		panic(err)
	}
	return o
}

// TreeLaw writes the exact outcome law given t: block verification's law
// of the selected path (blockLaw), placed on its nodes.
func (r MultipathBlock) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error {
	dst.Reset(len(t.Nodes), t.V)
	var g gbvPath
	if err := r.prepare(t, &g); err != nil {
		return err
	}
	if len(g.b.Tokens) == 0 {
		dst.AddRow(0, 1, t.Nodes[0].P)
		return nil
	}
	var law sim.Law
	if err := blockLaw(&g.b, &law, false); err != nil {
		return err
	}
	for i := 0; i <= law.Gamma; i++ {
		for y := 0; y < t.V; y++ {
			if m := law.At(i, y); m != 0 {
				dst.Add(g.nodes[i], y, m)
			}
		}
	}
	return nil
}
