package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// SpecHub is the verifier of SpecHub (Sun, Zhou, Chen, Sun, "SpecHub:
// Provable Acceleration to Multi-Draft Speculative Decoding", EMNLP 2024,
// pp. 20620–20641, arXiv 2411.05289) for its sparse pair of drafts
// (draft.Hub: with the hub a = argmax q, the ordered pair (first,
// second) is (i, a) with probability Q(i, a) = q(i), or (a, i) with
// Q(a, i) = q(a) q(i) / (1 − q(a)), i ≠ a). What was read: the abstract
// (a compact LP that replaces optimal transport with membership cost, a
// sparse joint focused on the most probable token, linear overhead) and
// the rule as the authors' code states it (MasterGodzilla/
// Speculative_decoding_OT at 7d592b7, EAGLE/eagle/model/utils.py, the
// 'spechub' branch of evaluate_posterior, its docstring and code); the
// paper's sections and equations were not available, so none is cited.
// The formulas below are that rule, written as one transport plan.
//
// With p, q the node's rows (read as given, as specInferStep reads them;
// the harness's rows are normalised), for every i ≠ a, in this order:
//
//	(i, a): accept i   w.p. min(1, p(i)/Q(i,a)),  s1(i) = min(p(i), q(i)),
//	        r(i) = p(i) − s1(i),  R(i,a) = q(i) − s1(i);
//	(a, i): accept i   w.p. min(1, r(i)/Q(a,i)),  s2(i) = min(r(i), Q(a,i)),
//	        res(i) = r(i) − s2(i),  R(a,i) = Q(a,i) − s2(i);
//	(a, i): then a     w.p. min(1, p(a)/A),   A = Σ_i R(a,i),
//	        r(a) = p(a) − min(p(a), A);
//	(i, a): then a     w.p. min(1, r(a)/B),   B = Σ_i R(i,a),
//	        res(a) = r(a) − min(r(a), B);
//
// and a node that accepts neither draft emits a token from norm(res). It
// is lossless: token y ≠ a is accepted with mass s1(y) + s2(y), a with
// min(p(a), A) + min(r(a), B), each at most p(y), and the rejected mass
// 1 − Σ (those) equals Σ res (p sums to 1), so the emission adds exactly
// res.
//
// It attains the optimum of its pair law. The pair's set is {a, i} with
// probability π(i) = q(i)/(1 − q(a)) = Q(i,a) + Q(a,i), and the hub is in
// every set, so no verifier accepts more than min(1, p(a) + Σ_{i≠a}
// min(p(i), π(i))). Here s1(i) + s2(i) = min(p(i), π(i)), A + B is the
// pair mass left after them, 1 − Σ_{i≠a} min(p(i), π(i)), and a takes
// min(p(a), A + B): the acceptance is that bound, α* of the set law
// (draft kind greedy at k = 2, whose optimal verifier greedy-draft
// reaches the same value; TestSpecHubAttainsBound).
//
// Where it differs from the authors' code: the code accepts a outright
// when p(a) > 1 − 10^-3 "to avoid numerical issue", which is not lossless
// and is left out. A node with one child (k = 1, depth below the root, or
// a row with one token) is token verification, as in the code. A node
// that is not a hub pair (another drafter's children) is verified on its
// first draw alone by token verification, which is lossless when that
// draw is from q. Randomness: one uniform for the draft's test, one for
// the hub's, one for the emitted token; the pass over the vocabulary (A,
// B, the residual) is made only when the draft's test fails. The sampler
// makes that pass with completeFast and draws the token with
// sampleMassBlocks, equal to the law's complete and sampleMass to rounding.
type SpecHub struct {
	// secondVsP is the planted bug of the mutant spechub-second-vs-p: the
	// second draft of (a, i) is tested against p(i) instead of the r(i)
	// that the first drafts of (i, a) left, so the target mass of i is
	// spent twice.
	secondVsP bool
}

// hubPlan is the transport plan of one node: the rows P, Q (read as
// given, as specInferStep reads them), the hub a, q(a), c = q(a)/(1 −
// q(a)), the sums A and B, r(a), and the residual res.
type hubPlan struct {
	P, Q  sim.Row
	a     int
	qa, c float64
	bigA  float64 // A
	bigB  float64 // B
	pa1   float64 // r(a)
	res   []float64
}

// newHubPlan starts the plan of a node with hub a: what the first test
// needs, no pass over the vocabulary.
func newHubPlan(P, Q sim.Row, a int) *hubPlan {
	qa := Q.At(a)
	return &hubPlan{P: P, Q: Q, a: a, qa: qa, c: qa / (1 - qa)}
}

// complete computes A, B, r(a) and the residual into res (length V), in
// one pass.
func (r SpecHub) complete(pl *hubPlan, res []float64) {
	a := pl.a
	pl.bigA, pl.bigB = 0, 0
	for j := range res {
		if j == a {
			continue
		}
		pj, qj := pl.P.At(j), pl.Q.At(j)
		s1 := math.Min(pj, qj)
		rj := pj - s1
		qaj := pl.c * qj
		s2 := r.second(pj, rj, qaj)
		pl.bigA += qaj - s2
		pl.bigB += qj - s1
		res[j] = math.Max(0, rj-s2)
	}
	pa := pl.P.At(a)
	pl.pa1 = pa - math.Min(pa, pl.bigA)
	res[a] = pl.pa1 - math.Min(pl.pa1, pl.bigB)
	pl.res = res
}

// completeFast is complete for the sampler: the same residual entries
// (bit for bit but res[a], which depends on A and B), and A and B summed
// over the rows' own storage with four running sums each, so they differ
// from complete's index-order sums by rounding only (TestSpecHubFast). The
// law (stepLaw) keeps complete.
func (r SpecHub) completeFast(pl *hubPlan, res []float64) {
	p32, p64 := pl.P.Data()
	q32, q64 := pl.Q.Data()
	switch {
	case p32 != nil && q32 != nil:
		pl.bigA, pl.bigB = hubFill(res, p32, q32, pl.a, pl.c, r.secondVsP)
	case p64 != nil && q64 != nil:
		pl.bigA, pl.bigB = hubFill(res, p64, q64, pl.a, pl.c, r.secondVsP)
	default:
		r.complete(pl, res)
		return
	}
	pa := pl.P.At(pl.a)
	pl.pa1 = pa - min(pa, pl.bigA)
	res[pl.a] = pl.pa1 - min(pl.pa1, pl.bigB)
	pl.res = res
}

// hubFill writes complete's res[j] for every j ≠ a and returns A and B
// (builtin min and max, which equal math.Min and math.Max on every input).
func hubFill[F float32 | float64](res []float64, p, q []F, a int, c float64, vsP bool) (bigA, bigB float64) {
	q, res = q[:len(p)], res[:len(p)]
	var a0, a1, a2, a3, b0, b1, b2, b3 float64
	at := func(j int) (float64, float64) { // A's and B's terms at j; writes res[j]
		pj, qj := float64(p[j]), float64(q[j])
		s1 := min(pj, qj)
		rj := pj - s1
		qaj := c * qj
		base := rj
		if vsP {
			base = pj
		}
		s2 := min(base, qaj)
		res[j] = max(0, rj-s2)
		return qaj - s2, qj - s1
	}
	for _, span := range [2][2]int{{0, a}, {a + 1, len(p)}} {
		j, end := span[0], span[1]
		for ; j+4 <= end; j += 4 {
			x0, y0 := at(j)
			x1, y1 := at(j + 1)
			x2, y2 := at(j + 2)
			x3, y3 := at(j + 3)
			a0, a1, a2, a3 = a0+x0, a1+x1, a2+x2, a3+x3
			b0, b1, b2, b3 = b0+y0, b1+y1, b2+y2, b3+y3
		}
		for ; j < end; j++ {
			x, y := at(j)
			a0, b0 = a0+x, b0+y
		}
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// second is the mass s2 of a second draft i: min(r(i), Q(a,i)), or for
// the mutant min(p(i), Q(a,i)).
func (r SpecHub) second(pj, rj, qaj float64) float64 {
	if r.secondVsP {
		return math.Min(pj, qaj)
	}
	return math.Min(rj, qaj)
}

// ratio is min(1, x/y), 1 where y = 0 (a test reached with probability 0).
func ratio(x, y float64) float64 {
	if y <= 0 {
		return 1
	}
	return math.Min(1, x/y)
}

// draftTest is the probability of accepting the draft i tested first: i
// of (i, a) when hubFirst is false, else i of (a, i).
func (r SpecHub) draftTest(pl *hubPlan, i int, hubFirst bool) float64 {
	pi, qi := pl.P.At(i), pl.Q.At(i)
	if !hubFirst {
		return ratio(pi, qi)
	}
	qai := pl.c * qi
	return ratio(r.second(pi, pi-math.Min(pi, qi), qai), qai)
}

// hubTest is the probability of accepting the hub after the draft i was
// rejected (the plan completed): min(1, r(a)/B) in (i, a), min(1,
// p(a)/A) in (a, i).
func (pl *hubPlan) hubTest(hubFirst bool) float64 {
	if !hubFirst {
		return ratio(pl.pa1, pl.bigB)
	}
	return ratio(pl.P.At(pl.a), pl.bigA)
}

// hubPair returns node n's two children when they are a hub pair of its q
// (first, second in draw order) and the hub a, else ok = false.
func hubPair(t *sim.Tree, n int) (c0, c1, a int, ok bool) {
	nd := &t.Nodes[n]
	if len(nd.Draws) != 2 || len(nd.Kids) != 2 {
		return 0, 0, 0, false
	}
	c0, c1 = nd.Draws[0], nd.Draws[1]
	a = sim.ArgmaxRow(nd.Q)
	x0, x1 := t.Nodes[c0].Token, t.Nodes[c1].Token
	return c0, c1, a, (x0 == a) != (x1 == a) && nd.Q.At(a) < 1
}

// step tests the draft, then (the plan completed only now) the hub, then
// emits from the residual.
func (r SpecHub) step(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	if len(t.Nodes[n].Draws) == 1 {
		return specInferStep(rng, t, n) // one draw: token verification
	}
	c0, c1, a, ok := hubPair(t, n)
	if !ok {
		return firstDrawStep(rng, t, n)
	}
	nd := &t.Nodes[n]
	pl := newHubPlan(nd.P, nd.Q, a)
	hubFirst := t.Nodes[c0].Token == a
	draftKid, hubKid := c0, c1
	if hubFirst {
		draftKid, hubKid = c1, c0
	}
	if rng.Float64() < r.draftTest(pl, t.Nodes[draftKid].Token, hubFirst) {
		return draftKid, 0
	}
	r.completeFast(pl, t.Scratch(0))
	if rng.Float64() < pl.hubTest(hubFirst) {
		return hubKid, 0
	}
	if y := sampleMassBlocks(rng.Float64(), pl.res); y >= 0 {
		return -1, y
	}
	return -1, sim.SampleRow(rng.Float64(), nd.P)
}

// firstDrawStep is token verification of node n's first draw.
func firstDrawStep(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	nd := &t.Nodes[n]
	c := nd.Draws[0]
	x := t.Nodes[c].Token
	if rng.Float64() < ratio(nd.P.At(x), nd.Q.At(x)) {
		return c, 0
	}
	w := t.Scratch(0)
	loadRow(w, nd.P)
	residualStep(w, nd.Q.At)
	return -1, sampleMass(rng.Float64(), w)
}

func (r SpecHub) stepLaw(t *sim.Tree, n int, kid, emit []float64) {
	if len(t.Nodes[n].Draws) == 1 {
		SpecInfer{}.stepLaw(t, n, kid, emit)
		return
	}
	c0, c1, a, ok := hubPair(t, n)
	if !ok {
		firstDrawLaw(t, n, kid, emit)
		return
	}
	nd := &t.Nodes[n]
	pl := newHubPlan(nd.P, nd.Q, a)
	hubFirst := t.Nodes[c0].Token == a
	draftKid, hubKid := c0, c1
	if hubFirst {
		draftKid, hubKid = c1, c0
	}
	d := r.draftTest(pl, t.Nodes[draftKid].Token, hubFirst)
	r.complete(pl, t.Scratch(0))
	h := pl.hubTest(hubFirst)
	kid[kidIndex(t, n, draftKid)] += d
	kid[kidIndex(t, n, hubKid)] += (1 - d) * h
	rej := (1 - d) * (1 - h)
	if sumOf(pl.res) > 0 {
		addNorm(emit, rej, pl.res)
	} else {
		w := t.Scratch(1)
		loadRow(w, nd.P)
		addNorm(emit, rej, w)
	}
}

// firstDrawLaw is the law of firstDrawStep.
func firstDrawLaw(t *sim.Tree, n int, kid, emit []float64) {
	nd := &t.Nodes[n]
	c := nd.Draws[0]
	x := t.Nodes[c].Token
	a := ratio(nd.P.At(x), nd.Q.At(x))
	kid[kidIndex(t, n, c)] += a
	w := t.Scratch(0)
	loadRow(w, nd.P)
	residualStep(w, nd.Q.At)
	addNorm(emit, 1-a, w)
}

// AcceptTree runs one step.
func (r SpecHub) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	return walkAccept(r, rng, t)
}

// TreeLaw writes the exact outcome law given t.
func (r SpecHub) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error { return walkLaw(r, t, dst) }

func init() {
	RegisterTree(TreeEntry{Info: Info{Name: "spechub", Summary: "SpecHub: a sparse pair of drafts through the hub token a = argmax q, verified by a transport plan (first drafts i of (i,a), second drafts of (a,i), then a)",
		Paper: "Sun et al. 2024, EMNLP, arXiv 2411.05289 (abstract; rule as in the authors' code, Speculative_decoding_OT EAGLE/eagle/model/utils.py)",
		Draft: draft.DraftHub, NeedsQ: true}, New: treeNoParams(SpecHub{})})
	// The planted bug: the second draft tested against p, as if the first
	// drafts had not used any of i's target mass.
	RegisterTree(TreeEntry{Info: Info{Name: "spechub-second-vs-p", Mutant: true, Summary: "spechub with the second draft i of (a,i) tested against p(i) instead of the residual r(i) the first drafts left",
		Paper: "planted: the second draft's test must use the target mass the first drafts left (algos/spechub.go)",
		Draft: draft.DraftHub, NeedsQ: true}, New: treeNoParams(SpecHub{secondVsP: true})})
}
