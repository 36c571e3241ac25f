package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/specsim/specsim/sim"
)

// OTOptimal is a multi-draft verifier that attains the optimal acceptance
// α* for k drafts drawn i.i.d. from q at every node: the value of the
// optimal transport (coupling) problem of Sun et al. (SpecTr, arXiv
// 2310.15141) whose dual Hu et al. ("Towards Optimal Multi-draft
// Speculative Decoding", arXiv 2502.18779, ICLR 2025) use to compute it for
// vocabularies in the thousands. The construction below is this file's own;
// it is checked against bound.go's exhaustive and max-flow α*.
//
// The optimum. Write G(x) = 1 - (1-x)^k, and lay the tokens out on [0, 1]
// in decreasing p/q (q = 0 first, p = 0 last), token y on an interval of
// length q(y), with P(x) and Q(x) the cumulative p and q masses. Then
//
//	α* = 1 - max_j D(Q_j),   D(x) = P(x) - G(x),
//
// the maximum over the prefixes of that order: α* = min_A [1 - p(A) +
// 1 - (1 - q(A))^k] (bound.go), and -p(A) + G(q(A)) is at least its value
// at the fractional prefix with the same q-mass (the ratio order maximises
// p at given q), where -P + G is concave between the prefixes, so its
// minimum lies at a prefix (OptimalAcceptanceIID).
//
// The coupling. Each draw x_i gets a key t_i uniform on the part of [0, 1]
// assigned to token x_i (a union of pieces of total length q(x_i), which
// partition [0, 1]), so the keys are i.i.d. uniform on [0, 1]; the verifier
// selects the draw with the smallest key. The selected token's law is
//
//	v(y) = ∫_{pieces of y} G'(t) dt,
//
// and the selected token is then verified as one draft from v: accepted
// with probability min(1, p(y)/v(y)), otherwise a token is emitted from
// norm((p - v)+). That is lossless for any assignment of pieces, and its
// acceptance is Σ_y min(p(y), v(y)). The assignment makes that α*: with a
// = argmax_j D(Q_j), on [0, Q_a] each token needs v ≤ p and on [Q_a, 1]
// v ≥ p. Where D is at its running maximum from the left (on [0, Q_a]) or
// from the right (on [Q_a, 1]), a token keeps its own interval (v - p
// has the sign the region needs). Each excursion of D below that running
// maximum, [s, e] with D(s) = D(e), is a pool where G gains exactly the p
// of its tokens; its time is shared so that every token gets v(y) = p(y):
// a martingale coupling of G'(T), T uniform on the pool, with the tokens'
// ratios, which exists because D ≤ D(s) on the pool (the ratios are below
// G' in convex order). The pool is cut by the left-curtain construction
// (Beiglböck and Juillet, "On a problem of optimal transport under
// marginal martingale constraints", Ann. Probab. 2016): tokens in
// increasing p/q each take the interval of the remaining time with their
// mass and mean G' equal to their ratio. Then Σ min(p, v) = G(Q_a) + 1 -
// P(Q_a) = α*.
//
// Cost: a sort and a pass over V per node, and the pools' cuts. Randomness:
// one uniform per draw (its key), one for the test, one for an emitted
// token. At k = 1 (G(x) = x, v = q) it is token verification.
type OTOptimal struct {
	// asQ is the planted bug of the mutant ot-selected-as-q: the selected
	// draft is verified against q, as if it were a plain draft, instead of
	// against the law v of the selection.
	asQ bool
}

// otPiece is a piece [a, b) of [0, 1] assigned to token tok.
type otPiece struct {
	a, b float64
	tok  int
}

// otPlan is the assignment of [0, 1] at one node: p normalised, the
// selection law v, and the pieces of each token (byTok[off[y]:off[y+1]],
// sorted by start).
type otPlan struct {
	k     int
	p, v  []float64
	q     []float64
	byTok []otPiece
	off   []int
}

// otG is G(x) = 1 - (1-x)^k, by repeated squaring (absolute error a few
// ulps, which is what the differences of G need).
func otG(x float64, k int) float64 {
	if x >= 1 {
		return 1
	}
	if x <= 0 {
		return 0
	}
	r, b := 1.0, 1-x
	for e := k; e > 0; e >>= 1 {
		if e&1 == 1 {
			r *= b
		}
		b *= b
	}
	return 1 - r
}

// otGPrime is G'(x) = k(1-x)^(k-1).
func otGPrime(x float64, k int) float64 {
	return float64(k) * (1 - otG(x, k-1))
}

// otLayout is the ratio order of the tokens with p > 0 or q > 0 (p/q
// decreasing, q = 0 first, ties by index) and the cumulative masses at its
// boundaries: Q[j], P[j] after the first j tokens.
func otLayout(p, q []float64) (order []int, Q, P []float64) {
	for i := range p {
		if p[i] > 0 || q[i] > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(x, y int) int {
		l, r := p[x]*q[y], p[y]*q[x]
		switch {
		case l > r:
			return -1
		case l < r:
			return 1
		}
		return x - y
	})
	Q, P = make([]float64, len(order)+1), make([]float64, len(order)+1)
	for j, y := range order {
		Q[j+1], P[j+1] = Q[j]+q[y], P[j]+p[y]
	}
	return order, Q, P
}

// otArgmax returns the boundary a maximising D(Q_j) = P_j - G(Q_j) (the
// first on ties) and D there.
func otArgmax(Q, P []float64, k int) (int, float64) {
	a, best := 0, 0.0
	for j := range Q {
		if d := P[j] - otG(Q[j], k); d > best {
			a, best = j, d
		}
	}
	return a, best
}

// OptimalAcceptanceIID returns α* for k drafts drawn i.i.d. from q against
// target p in O(V log V): 1 - max_j [P_j - G(Q_j)] over the prefixes of
// the tokens in decreasing p/q (OTOptimal's doc). It needs no enumeration
// of draft sets, so it serves any V.
func OptimalAcceptanceIID(p, q []float64, k int) (float64, error) {
	if err := checkBound(p, q, k); err != nil {
		return 0, err
	}
	_, Q, P := otLayout(p, q)
	_, d := otArgmax(Q, P, k)
	return math.Max(0, math.Min(1, 1-d)), nil
}

// newOTPlan builds the assignment for target p, draft q (both normalised
// here) and k draws.
func newOTPlan(pr, qr sim.Row, k int) *otPlan {
	v := pr.Len()
	pl := &otPlan{k: k, p: pr.Float64s(nil), q: qr.Float64s(nil), v: make([]float64, v)}
	sim.Normalize(pl.p)
	sim.Normalize(pl.q)
	order, Q, P := otLayout(pl.p, pl.q)
	a, _ := otArgmax(Q, P, k)
	var pieces []otPiece
	pieces = pl.sweepLeft(pieces, order, Q, P, a)
	pieces = pl.sweepRight(pieces, order, Q, P, a)
	pl.index(pieces)
	return pl
}

// otItem is a token's share of a pool: its mass there and its ratio p/q.
type otItem struct {
	tok       int
	mass, rho float64
}

// dAt is D(x) inside the interval of the token at position j (1-based) of
// the order.
func (pl *otPlan) dAt(x float64, j int, order []int, Q, P []float64) float64 {
	y := order[j-1]
	return P[j-1] + pl.p[y]/pl.q[y]*(x-Q[j-1]) - otG(x, pl.k)
}

// cross returns the point of the interval of token j where D crosses
// level r (D convex there; D at the end named by rising is ≥ r, at the
// other < r), by bisection.
func (pl *otPlan) cross(j int, r float64, rising bool, order []int, Q, P []float64) float64 {
	lo, hi := Q[j-1], Q[j]
	for range 200 {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		if above := pl.dAt(mid, j, order, Q, P) >= r; above == rising {
			hi = mid
		} else {
			lo = mid
		}
	}
	if rising {
		return hi
	}
	return lo
}

// sweepLeft assigns [0, Q_a]: tokens at D's running maximum keep their
// intervals; each excursion below it becomes a pool.
func (pl *otPlan) sweepLeft(pieces []otPiece, order []int, Q, P []float64, a int) []otPiece {
	d := func(j int) float64 { return P[j] - otG(Q[j], pl.k) }
	r := 0.0
	for j := 1; j <= a; {
		if d(j) >= r {
			pieces = appendPiece(pieces, Q[j-1], Q[j], order[j-1])
			r = d(j)
			j++
			continue
		}
		m := j + 1
		for d(m) < r { // D(Q_a) ≥ r ends the excursion
			m++
		}
		e := pl.cross(m, r, true, order, Q, P)
		var items []otItem
		for i := j; i < m; i++ {
			items = appendItem(items, order[i-1], pl.q[order[i-1]], pl)
		}
		items = appendItem(items, order[m-1], e-Q[m-1], pl)
		pieces = pl.pool(pieces, Q[j-1], e, items)
		pieces = appendPiece(pieces, e, Q[m], order[m-1])
		r = d(m)
		j = m + 1
	}
	return pieces
}

// sweepRight assigns [Q_a, 1] as sweepLeft does [0, Q_a], from the right.
func (pl *otPlan) sweepRight(pieces []otPiece, order []int, Q, P []float64, a int) []otPiece {
	d := func(j int) float64 { return P[j] - otG(Q[j], pl.k) }
	n := len(order)
	r := d(n)
	for j := n; j > a; {
		if d(j-1) >= r {
			pieces = appendPiece(pieces, Q[j-1], Q[j], order[j-1])
			r = d(j - 1)
			j--
			continue
		}
		m := j - 2
		for d(m) < r { // D(Q_a) ≥ r ends the excursion
			m--
		}
		// D(Q_m) ≥ r > D(Q_{m+1}): the crossing lies in token m+1.
		e := pl.cross(m+1, r, false, order, Q, P)
		items := appendItem(nil, order[m], Q[m+1]-e, pl)
		for i := m + 2; i <= j; i++ {
			items = appendItem(items, order[i-1], pl.q[order[i-1]], pl)
		}
		pieces = pl.pool(pieces, e, Q[j], items)
		pieces = appendPiece(pieces, Q[m], e, order[m])
		r = d(m)
		j = m
	}
	return pieces
}

func appendPiece(pieces []otPiece, a, b float64, tok int) []otPiece {
	if b > a {
		pieces = append(pieces, otPiece{a, b, tok})
	}
	return pieces
}

func appendItem(items []otItem, tok int, mass float64, pl *otPlan) []otItem {
	if mass > 0 {
		items = append(items, otItem{tok, mass, pl.p[tok] / pl.q[tok]})
	}
	return items
}

// pool shares [s, e] among items (their masses sum to e - s, their p to
// G(e) - G(s)) by the left-curtain construction: in increasing ratio,
// each item takes the window of the free time with its mass whose mean G'
// is its ratio; the window's start is found by bisection on the free mass
// before it (the mean falls as it moves right). The last item takes what
// is left.
func (pl *otPlan) pool(pieces []otPiece, s, e float64, items []otItem) []otPiece {
	f := otFree{k: pl.k, gaps: []otPiece{{s, e, -1}}}
	f.prefix(0)
	slices.SortStableFunc(items, func(x, y otItem) int { return cmpFloat(x.rho, y.rho) })
	for i, it := range items {
		last := i == len(items)-1
		w := it.mass
		if last || w > f.total() {
			w = f.total()
		}
		u := 0.0
		if !last {
			u = f.windowStart(w, it.rho)
		}
		pieces = f.cut(pieces, u, w, it.tok)
	}
	return pieces
}

// otFree is the free time of a pool: disjoint gaps in order, with the
// free mass (before) and the integral of G' (integ) before each gap, and G
// at each gap's ends (ga, gb). A cut changes the gaps from the first it
// touches on, so the sums are recomputed from there only: the values are
// the ones a pass from the first gap gives (the sums run left to right), in
// time proportional to the gaps after the cut.
type otFree struct {
	k             int
	gaps          []otPiece
	before, integ []float64
	ga, gb        []float64 // G at each gap's start and end
}

// prefix recomputes the sums and G at the ends from gap from on.
func (f *otFree) prefix(from int) {
	n := len(f.gaps)
	f.before, f.integ = resize(f.before, n+1), resize(f.integ, n+1)
	f.ga, f.gb = resize(f.ga, n), resize(f.gb, n)
	m, g := 0.0, 0.0
	if from > 0 {
		m, g = f.before[from], f.integ[from]
	}
	for i := from; i < n; i++ {
		gp := f.gaps[i]
		f.before[i], f.integ[i] = m, g
		f.ga[i], f.gb[i] = otG(gp.a, f.k), otG(gp.b, f.k)
		m += gp.b - gp.a
		g += f.gb[i] - f.ga[i]
	}
	f.before[n], f.integ[n] = m, g
}

// resize returns s with length n, its first elements kept.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return append(s[:cap(s)], make([]float64, n-cap(s))...)
	}
	return s[:n]
}

func (f *otFree) total() float64 { return f.before[len(f.gaps)] }

// at returns the gap holding free mass u and the time point there.
func (f *otFree) at(u float64) (int, float64) {
	n := len(f.gaps)
	i := max(0, min(n-1, sort.Search(n, func(j int) bool { return f.before[j] > u })-1))
	gp := f.gaps[i]
	return i, math.Min(gp.b, gp.a+math.Max(0, u-f.before[i]))
}

// integral is ∫ G' over the free time before the point x of gap i.
func (f *otFree) integral(i int, x float64) float64 {
	return f.integ[i] + otG(x, f.k) - f.ga[i]
}

// windowStart returns the free mass u before the window of mass w whose
// mean G' is rho, clamped to [0, total - w]: Newton's method on the mean,
// kept inside a bisection bracket (the mean falls as u grows).
func (f *otFree) windowStart(w, rho float64) float64 {
	mean := func(u float64) (float64, float64) {
		i0, x0 := f.at(u)
		i1, x1 := f.at(u + w)
		return (f.integral(i1, x1) - f.integral(i0, x0)) / w, (otGPrime(x1, f.k) - otGPrime(x0, f.k)) / w
	}
	lo, hi := 0.0, math.Max(0, f.total()-w)
	if m, _ := mean(lo); m <= rho {
		return lo
	}
	if m, _ := mean(hi); m >= rho {
		return hi
	}
	u := (lo + hi) / 2
	for range 200 {
		m, dm := mean(u)
		if m > rho {
			lo = u
		} else {
			hi = u
		}
		if math.Abs(m-rho) <= 1e-13*rho || hi-lo <= 1e-17 {
			break
		}
		next := u - (m-rho)/dm
		if !(dm < 0) || !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if next == u {
			break
		}
		u = next
	}
	return u
}

// cut gives the free time from free mass u to u + w to token tok (as
// pieces) and removes it from the gaps.
func (f *otFree) cut(pieces []otPiece, u, w float64, tok int) []otPiece {
	i0, x0 := f.at(u)
	i1, x1 := f.at(u + w)
	if u+w >= f.total() {
		i1, x1 = len(f.gaps)-1, f.gaps[len(f.gaps)-1].b
	}
	for i := i0; i <= i1; i++ {
		a, b := f.gaps[i].a, f.gaps[i].b
		if i == i0 {
			a = x0
		}
		if i == i1 {
			b = x1
		}
		pieces = appendPiece(pieces, a, b, tok)
	}
	var mid [2]otPiece
	nm := 0
	if x0 > f.gaps[i0].a {
		mid[nm], nm = otPiece{f.gaps[i0].a, x0, -1}, nm+1
	}
	if x1 < f.gaps[i1].b {
		mid[nm], nm = otPiece{x1, f.gaps[i1].b, -1}, nm+1
	}
	f.gaps = slices.Replace(f.gaps, i0, i1+1, mid[:nm]...)
	if len(f.gaps) == 0 {
		f.gaps, i0 = append(f.gaps, otPiece{x1, x1, -1}), 0
	}
	f.prefix(i0)
	return pieces
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// index groups the pieces by token and computes v.
func (pl *otPlan) index(pieces []otPiece) {
	slices.SortFunc(pieces, func(x, y otPiece) int {
		if x.tok != y.tok {
			return x.tok - y.tok
		}
		return cmpFloat(x.a, y.a)
	})
	pl.byTok = pieces
	pl.off = make([]int, len(pl.v)+1)
	for _, pc := range pieces {
		pl.off[pc.tok+1]++
		pl.v[pc.tok] += otG(pc.b, pl.k) - otG(pc.a, pl.k)
	}
	for y := range len(pl.v) {
		pl.off[y+1] += pl.off[y]
	}
}

// key returns the point of token y's pieces at fraction u of their length.
func (pl *otPlan) key(y int, u float64) float64 {
	ps := pl.byTok[pl.off[y]:pl.off[y+1]]
	total := 0.0
	for _, pc := range ps {
		total += pc.b - pc.a
	}
	target := u * total
	for _, pc := range ps {
		if l := pc.b - pc.a; target < l {
			return pc.a + target
		} else {
			target -= l
		}
	}
	if len(ps) == 0 {
		return math.Inf(1) // a token with no time is never drawn (q = 0)
	}
	return ps[len(ps)-1].b
}

// accept returns the probability of keeping a selected token y: min(1,
// p/v), or min(1, p/q) for the mutant.
func (r OTOptimal) accept(pl *otPlan, y int) float64 {
	law := pl.v
	if r.asQ {
		law = pl.q
	}
	if law[y] <= 0 {
		return 1
	}
	return math.Min(1, pl.p[y]/law[y])
}

// residual writes (p - v)+ (the mutant: (p - q)+) into w.
func (r OTOptimal) residual(pl *otPlan, w []float64) {
	law := pl.v
	if r.asQ {
		law = pl.q
	}
	for i := range w {
		w[i] = math.Max(0, pl.p[i]-law[i])
	}
}

// step verifies a node with one draw as Token does (there v = q: one key,
// G(x) = x), with no plan.
func (r OTOptimal) step(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	nd := &t.Nodes[n]
	if len(nd.Draws) == 1 {
		return specInferStep(rng, t, n) // one draw: token verification
	}
	pl := newOTPlan(nd.P, nd.Q, len(nd.Draws))
	best, sel := math.Inf(1), -1
	for _, c := range nd.Draws {
		if k := pl.key(t.Nodes[c].Token, rng.Float64()); k < best || sel < 0 {
			best, sel = k, c
		}
	}
	if rng.Float64() < r.accept(pl, t.Nodes[sel].Token) {
		return sel, 0
	}
	w := t.Scratch(0)
	r.residual(pl, w)
	if y := sampleMass(rng.Float64(), w); y >= 0 {
		return -1, y
	}
	return -1, sim.SampleRow(rng.Float64(), nd.P)
}

func (r OTOptimal) stepLaw(t *sim.Tree, n int, kid, emit []float64) {
	nd := &t.Nodes[n]
	if len(nd.Draws) == 1 {
		SpecInfer{}.stepLaw(t, n, kid, emit)
		return
	}
	pl := newOTPlan(nd.P, nd.Q, len(nd.Draws))
	var count []otCount // the drawn tokens in order of first draw
	for _, c := range nd.Draws {
		y := t.Nodes[c].Token
		if i := slices.IndexFunc(count, func(e otCount) bool { return e.tok == y }); i >= 0 {
			count[i].n++
		} else {
			count = append(count, otCount{y, 1})
		}
	}
	rej := 0.0
	for i, c := range nd.Kids {
		y := t.Nodes[c].Token
		s := pl.selectProb(y, count)
		a := r.accept(pl, y)
		kid[i] = s * a
		rej += s * (1 - a)
	}
	w := t.Scratch(0)
	r.residual(pl, w)
	if sumOf(w) > 0 {
		addNorm(emit, rej, w)
	} else {
		addNorm(emit, rej, pl.p)
	}
}

// selectProb is the probability that the smallest key belongs to a draw
// of token y, given the multiset of drawn tokens (count): the integral
// over t of c_y ψ_y (1 - Ψ_y)^{c_y - 1} Π_{z≠y} (1 - Ψ_z)^{c_z}, where ψ_z
// is 1/q(z) on z's pieces and Ψ_z its integral. On each interval between
// the pieces' ends the integrand is a polynomial in t, integrated exactly.
func (pl *otPlan) selectProb(y int, count []otCount) float64 {
	var cuts []float64
	cy := 0
	for _, e := range count {
		if e.tok == y {
			cy = e.n
		}
		z := e.tok
		for _, pc := range pl.byTok[pl.off[z]:pl.off[z+1]] {
			cuts = append(cuts, pc.a, pc.b)
		}
	}
	slices.Sort(cuts)
	total := 0.0
	for i := 0; i+1 < len(cuts); i++ {
		t0, t1 := cuts[i], cuts[i+1]
		if !(t1 > t0) || pl.density(y, (t0+t1)/2) == 0 {
			continue
		}
		poly := []float64{float64(cy) * pl.density(y, (t0+t1)/2)}
		for _, e := range count {
			z, c := e.tok, e.n
			c0, slope := 1-pl.cdf(z, t0), -pl.density(z, (t0+t1)/2)
			if z == y {
				c--
			}
			for range c {
				poly = mulLinear(poly, c0, slope)
			}
		}
		h, pw := t1-t0, t1-t0
		for deg, co := range poly {
			total += co * pw / float64(deg+1)
			pw *= h
		}
	}
	return total
}

// otCount is a drawn token and how many draws carry it.
type otCount struct{ tok, n int }

// mulLinear returns poly·(c0 + slope·τ), coefficients in increasing degree.
func mulLinear(poly []float64, c0, slope float64) []float64 {
	out := make([]float64, len(poly)+1)
	for i, co := range poly {
		out[i] += co * c0
		out[i+1] += co * slope
	}
	return out
}

// density is ψ_z(t): 1/q(z) on z's pieces, else 0.
func (pl *otPlan) density(z int, t float64) float64 {
	for _, pc := range pl.byTok[pl.off[z]:pl.off[z+1]] {
		if pc.a <= t && t < pc.b {
			return 1 / pl.length(z)
		}
	}
	return 0
}

// cdf is Ψ_z(t): the share of z's time before t.
func (pl *otPlan) cdf(z int, t float64) float64 {
	s := 0.0
	for _, pc := range pl.byTok[pl.off[z]:pl.off[z+1]] {
		s += math.Max(0, math.Min(t, pc.b)-pc.a)
	}
	return s / pl.length(z)
}

// length is the total length of z's pieces (q(z) up to rounding).
func (pl *otPlan) length(z int) float64 {
	s := 0.0
	for _, pc := range pl.byTok[pl.off[z]:pl.off[z+1]] {
		s += pc.b - pc.a
	}
	return s
}

// AcceptTree runs one step.
func (r OTOptimal) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	return walkAccept(r, rng, t)
}

// TreeLaw writes the exact outcome law given t.
func (r OTOptimal) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error { return walkLaw(r, t, dst) }

func init() {
	RegisterTree(TreeEntry{Info: Info{Name: "ot-optimal", Summary: "optimal verifier for i.i.d. drafts: selects the draft with the smallest key on an assignment of [0,1] to the tokens, verifies it against the selection law v; acceptance alpha*",
		Paper: "Hu et al. 2025, arXiv 2502.18779 (alpha* through the dual); Sun et al. 2023, arXiv 2310.15141 (the transport problem)",
		Draft: sim.DraftIID, NeedsQ: true}, New: treeNoParams(OTOptimal{})})
	// The planted bug: the selected draft verified against q as if it were
	// a plain draft; the selection changed its law to v.
	RegisterTree(TreeEntry{Info: Info{Name: "ot-selected-as-q", Mutant: true, Summary: "ot-optimal's selected draft verified with min(1, p/q) and the residual (p - q)+, ignoring that the selection changed its law",
		Paper: "planted: the selection changes the selected draft's law from q to v (algos/otoptimal.go)",
		Draft: sim.DraftIID, NeedsQ: true}, New: treeNoParams(OTOptimal{asQ: true})})
}
