package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Traversal is Traversal Verification (Weng, Hu, Chen, Liu, Mei, Qiu,
// Tian, Shi, "Traversal Verification for Speculative Tree Decoding",
// arXiv 2505.12398, NeurIPS 2025): the token tree is verified from the
// leaves towards the root, each test accepting the whole path from the
// root to the tested node with a sequence-level probability, so a path
// whose first token alone would be rejected can still be kept. What was
// read of the paper is its abstract; Thomas, Kitanovski, Goldblum and Pal
// (arXiv 2602.16994, §3.2) add that it is the one bottom-up multi-path
// verifier and that it reduces to block verification on a single path.
// The formulas below are this file's, derived so that the rule is
// lossless and equals block verification (Block) on a chain; the proof
// is sketched here and the exact engine checks it.
//
// Each node n carries a weight a_n, a target row P_n and a draft row Q_n,
// at first the node's p and q and
//
//	a_root = 1,   a_c = min(a_n · P_n(x_c) / Q_n(x_c), 1)
//
// for the child c of n carrying token x_c (block verification's prefix
// weight w, computed when the traversal reaches c). The traversal is the
// post-order walk: from n it descends into the first child not yet
// deleted; a node none of whose children is left is tested, and with
// η ~ U[0,1) it is accepted when η < a_n, which ends the step with the
// path to n accepted and the next token drawn from P_n. Otherwise n is
// deleted and its parent m (weight a, rows P, Q) becomes
//
//	Z = Σ_x (a·P(x) − Q(x))+,   P ← norm((a·P − Q)+),
//	a ← Z / (Z + 1 − a)           (1 where Z + 1 − a = 0),
//	Q ← norm(Q with x_n zeroed),
//
// before the walk descends into m's next child. The root's weight stays
// 1, so the walk ends at the latest at the root, emitting from its last
// residual. On a chain this is Block's rule (a_i = w_i, and the weight
// after a deletion is Block's threshold h_i, evaluated by blockH), so the
// two have the same law given the draft (TestTraversalChainIsBlock).
//
// Lossless for children drawn without replacement from q (sim.DraftWOR;
// Q ← Q with x zeroed is the law of the next sibling). Proof sketch, by
// induction over the subtree of m with weight a, rows (P, Q): the walk
// accepts inside it with probability a, and then emits the target's
// continuation of P. The first child is x with probability Q(x) and is
// accepted in its subtree with probability a_x, so x is emitted with mass
// Q(x)·a_x = min(a·P(x), Q(x)); the rest of the mass, a·P − min(a·P, Q) =
// (a·P − Q)+ of total Z, has to come from the 1 − a + Z left after the
// first child failed: the weight Z/(Z + 1 − a) and the row norm((a·P −
// Q)+) of the update, applied to the remaining children, drawn from the
// updated Q. At the root a = 1: the emitted continuation is p's.
//
// Where the paper may differ: the chosen variant is for trees whose
// children are drawn without replacement, walked in draw order, and the
// rule is registered for sim.DraftWOR only. On i.i.d. trees (a token
// drawn twice shares one node; arXiv 2602.16994 runs Traversal on them)
// it walks the distinct children in order of first draw, which are drawn
// without replacement, but their number depends on the draws: the proof
// above does not cover that, although the exact engine finds the law
// exact there too (simulate exact --algo traversal --draft iid on
// markov:V=4 k=3 depth 2, markov:V=5 k=2 depth 3, markov:V=4 k=4 depth
// 2: TV ≤ 2.4e-15). Randomness: one uniform per tested node, then one for
// the emitted token.
type Traversal struct {
	// keepQ is the planted bug of the mutant traversal-keepq: a node's
	// draft row is left whole after a child's subtree is deleted, the
	// update for siblings drawn with replacement applied to siblings drawn
	// without it.
	keepQ bool
}

func init() {
	RegisterTree(TreeEntry{Info: Info{Name: "traversal", Summary: "Traversal Verification: leaf-to-root tests of whole paths with sequence-level weights (block verification on a chain)",
		Paper: "Weng et al. 2025, arXiv 2505.12398 (abstract); Thomas et al. 2026, arXiv 2602.16994, sec. 3.2",
		Draft: sim.DraftWOR, NeedsQ: true}, New: treeNoParams(Traversal{})})
	// The planted bug: the deleted token stays in its parent's draft row,
	// as if the next sibling were drawn with replacement.
	RegisterTree(TreeEntry{Info: Info{Name: "traversal-keepq", Mutant: true, Summary: "Traversal Verification that leaves a deleted child's token in its parent's draft row (with-replacement update on children drawn without replacement)",
		Paper: "planted here: the draft-row update Q <- norm(Q with x zeroed) of traversal left out",
		Draft: sim.DraftWOR, NeedsQ: true}, New: treeNoParams(Traversal{keepQ: true})})
}

// tvWalk is one traversal: of the sampler (rng set, the outcome in out)
// or of the law (law set, the masses added to it).
type tvWalk struct {
	tv  Traversal
	t   *sim.Tree
	rng *rand.Rand
	law *sim.TreeLaw
	out sim.TreeOutcome
	err error
}

// AcceptTree runs one step.
func (tv Traversal) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	w := tvWalk{tv: tv, t: t, rng: rng}
	w.visit(0, 1, 1)
	return w.out
}

// TreeLaw writes the exact outcome law given t.
func (tv Traversal) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error {
	dst.Reset(len(t.Nodes), t.V)
	w := tvWalk{tv: tv, t: t, law: dst}
	w.visit(0, 1, 1)
	return w.err
}

// visit walks the subtree of n entered with weight a and probability
// reach (1 for the sampler). It returns the probability of acceptance
// inside the subtree (law) and whether the sampler accepted in it.
//
// The law writes the rows of every updated node (general). The sampler
// takes two shortcuts where they apply, with the same law: a node with
// one child needs its rows only if it is accepted after the child's
// deletion, and its new weight Z/(Z + 1 − a) ≤ a only if η < a, as in
// Block's lazy form (single); a node of weight 1 updates like recursive
// rejection sampling without replacement, whose scalar form needs one
// pass per deletion (rrsScalar, shared with RRSWithout).
func (w *tvWalk) visit(n int, a, reach float64) (float64, bool) {
	nd := &w.t.Nodes[n]
	if w.law == nil {
		switch {
		case len(nd.Kids) == 1:
			return 0, w.single(n, a)
		case len(nd.Kids) > 1 && a == 1 && !w.tv.keepQ:
			return 0, w.unitWeight(n)
		}
	}
	return w.general(n, a, reach)
}

// childWeight returns a_c = min(a·P(x)/Q(x), 1) (0 where Q(x) = 0).
func childWeight(a, px, qx float64) float64 {
	if !(qx > 0) {
		return 0
	}
	return math.Min(a*px/qx, 1)
}

// single is the sampler at a node n of weight a with one child.
func (w *tvWalk) single(n int, a float64) bool {
	nd := &w.t.Nodes[n]
	c := nd.Kids[0]
	x := w.t.Nodes[c].Token
	if _, done := w.visit(c, childWeight(a, nd.P.At(x), nd.Q.At(x)), 1); done {
		return true
	}
	u := w.rng.Float64()
	if !(u < a) { // the new weight is at most a
		return false
	}
	z := blockZ(a, nd.P, nd.Q)
	if !(u < blockH(z, a)) {
		return false
	}
	w.out.Node, w.out.Next = n, -1
	if z > 0 {
		w.out.Next = sim.SampleResidual(w.rng.Float64(), a, nd.P, nd.Q, z)
	}
	if w.out.Next < 0 { // an empty residual keeps P, as delete does
		w.out.Next = sim.SampleRow(w.rng.Float64(), nd.P)
	}
	return true
}

// unitWeight is the sampler at a node n of weight 1 with several
// children: the weight stays 1 and the rows follow recursive rejection
// sampling without replacement, so the node is accepted once every
// child's subtree is deleted.
func (w *tvWalk) unitWeight(n int) bool {
	st := newRRSScalar(&w.t.Nodes[n])
	for _, c := range st.nd.Kids {
		x := w.t.Nodes[c].Token
		if _, done := w.visit(c, math.Min(st.ratio(x), 1), 1); done {
			return true
		}
		st.reject(x)
	}
	w.out.Node, w.out.Next = n, st.emit(w.rng, w.t.V)
	return true
}

// general walks node n with its rows written out (the law; the sampler
// where no shortcut applies).
func (w *tvWalk) general(n int, a, reach float64) (float64, bool) {
	t := w.t
	nd := &t.Nodes[n]
	// P and Q of n, loaded into the scratch of n's depth at the first
	// deletion below n (one active node per depth in a depth-first walk).
	var pr, qr []float64
	acc := 0.0
	for _, c := range nd.Kids {
		x := t.Nodes[c].Token
		px, qx := nd.P.At(x), nd.Q.At(x)
		if pr != nil {
			px, qx = pr[x], qr[x]
		}
		m, done := w.visit(c, childWeight(a, px, qx), reach)
		if done {
			return 0, true
		}
		acc += m
		reach = max(reach-m, 0) // rounding must not leave a negative mass
		if pr == nil {
			pr, qr = t.Scratch(2*nd.Depth), t.Scratch(2*nd.Depth+1)
			loadRow(pr, nd.P)
			loadRow(qr, nd.Q)
		}
		a = w.tv.delete(pr, qr, a, x)
	}
	m, done := w.test(n, a, reach, pr)
	return acc + m, done
}

// delete applies the update of a node of weight a and rows pr, qr after
// the subtree of its child carrying x was deleted, and returns the new
// weight.
func (tv Traversal) delete(pr, qr []float64, a float64, x int) float64 {
	z := 0.0
	for i, v := range pr {
		if d := a*v - qr[i]; d > 0 {
			z += d
		}
	}
	if z > 0 {
		for i, v := range pr {
			pr[i] = max(a*v-qr[i], 0) / z
		}
	}
	if !tv.keepQ {
		qr[x] = 0
		if s := sim.Normalize(qr); !(s > 0) {
			clear(qr)
		}
	}
	return blockH(z, a)
}

// test tests node n, left with weight a and probability reach: accepted
// with probability a, the next token from its row (pr, or n's target row
// when nothing below n was deleted). It returns the accepted probability
// and, for the sampler, whether it accepted.
func (w *tvWalk) test(n int, a, reach float64, pr []float64) (float64, bool) {
	nd := &w.t.Nodes[n]
	if w.law == nil {
		if !(w.rng.Float64() < a) {
			return 0, false
		}
		w.out.Node = n
		if pr == nil {
			w.out.Next = sim.SampleRow(w.rng.Float64(), nd.P)
		} else {
			w.out.Next = sampleMass(w.rng.Float64(), pr)
		}
		return 0, true
	}
	m := reach * a
	if pr == nil {
		w.law.AddRow(n, m, nd.P)
	} else if err := w.law.AddVec(n, m, pr); err != nil && w.err == nil {
		w.err = err
	}
	return m, false
}
