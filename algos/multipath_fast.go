package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/specsim/specsim/sim"
)

// The sampler of MultipathBlock without sorting the vocabulary.
//
// Block verification of the selected path needs, at depth i, the skewed
// probability s_i(x_i) of the selected token (for the weight w_i), and only
// at the depths the lazy form reaches (Block) the mass Z_i = Σ_y (w_i·p_i(y)
// − s_i(y))+ and, at τ, a draw from that residual. The law (TreeLaw) writes
// every s_i(y) by sorting the tokens by key (gbvSkew); the sampler gets the
// same quantities in passes over the vocabulary:
//
//   - s(x) needs L(x), the draft mass of the tokens ranked below x, and the
//     total S = Σ_y v(y) of the unnormalised v(y) = q(y)·h(A, C)/den. The
//     v telescope: with G(t) = (β + ρt)^k, v(y) = (G(L+q) − G(L))/(ρ·den),
//     so the v of any run of tokens consecutive in key order sum to
//     Q·h(β + ρ(L+Q), β + ρL)/den, Q the run's draft mass and L the mass
//     below it; S is the run of all of them. gbvBelow sums L(x) in one
//     pass, comparing keys by a product and dividing only near a tie.
//   - Z and the draw group the tokens into buckets of consecutive keys
//     (ranges of the key's bits). Along the key order s(y)/q(y) =
//     h(A, C)/(den·S) grows, within a bucket between its values at the
//     bucket's ends, so a bucket whose keys all exceed the upper value
//     (times 1/w) has every residual positive and adds w·Σp − (its v)/S,
//     one whose keys are all below the lower value adds nothing, and only
//     the tokens of the buckets between (mixed) are sorted and summed one
//     by one. A draw walks the buckets in key order and sorts the one its
//     target falls in.
//
// The values equal the law's to rounding (TestMultipathFast); the draw
// takes the residual's tokens in key order, not in index order, so for the
// same uniforms the emitted token can differ from a draw over the law's
// rows (the same law; the uniforms drawn are the same).

// gbvLevel is one depth of the selected path as the sampler sees it.
type gbvLevel struct {
	p, q sim.Row
	x    int
	skew bool // s is the selection law (k ≥ 2); else s = q
	k    int
	// beta, rho are β and ρ of the prefix above this depth; den is
	// Σ_{j<k} β^j and sTot the normaliser S of s = v/S.
	beta, rho, den, sTot float64
	sx                   float64 // s(x)
}

// gbvH returns Σ_{j<k} a^j c^{k-1-j} by Horner in a, as gbvSkew does.
func gbvH(a, c float64, k int) float64 {
	h, cp := 0.0, 1.0
	for range k {
		h = h*a + cp
		cp *= c
	}
	return h
}

// setSkew makes lv a skewed depth with prefix β, ρ and k paths, computes
// s(x), and returns β and ρ after x (as gbvSkew does).
func (lv *gbvLevel) setSkew(beta, rho float64, k int) (float64, float64) {
	lv.skew, lv.k, lv.beta, lv.rho = true, k, beta, rho
	lv.den = 0
	bp := 1.0
	for range k {
		lv.den += bp
		bp *= beta
	}
	low, tot := gbvBelow(lv.p, lv.q, lv.x)
	qx := lv.q.At(lv.x)
	a, c := beta+rho*(low+qx), beta+rho*low
	lv.sTot = tot * gbvH(beta+rho*tot, beta, k) / lv.den
	if !(lv.sTot > 0) {
		lv.sTot = 1 // as gbvSkew leaves s unnormalised when its sum is 0
	}
	if !(qx > 0) { // x is not ranked (another drafter's child): s(x) = 0 and gbvSkew's β, ρ after it
		lv.sx = 0
		return 0, 0
	}
	lv.sx = qx * gbvH(a, c, k) / lv.den / lv.sTot
	return c / a, rho * qx / a
}

// gbvBelow returns the draft mass of the tokens ranked below x (key, then
// token: gbvCmp) and the total draft mass.
func gbvBelow(p, q sim.Row, x int) (low, tot float64) {
	kx := gbvKey(p, q, x)
	p32, p64 := p.Data()
	q32, q64 := q.Data()
	switch {
	case p32 != nil && q32 != nil:
		return gbvBelowRows(p32, q32, x, kx)
	case p64 != nil && q64 != nil:
		return gbvBelowRows(p64, q64, x, kx)
	}
	return gbvBelowRows(p.Float64s(nil), q.Float64s(nil), x, kx)
}

// gbvTie is the relative margin within which gbvBelowRows divides: a key
// p/q below kx·(1 − gbvTie) (the product's rounding is far inside) rounds
// below kx, one above kx·(1 + gbvTie) above it.
const gbvTie = 1e-14

// gbvBelowRows is gbvBelow over the rows' storage; kx is x's key.
func gbvBelowRows[F float32 | float64](p, q []F, x int, kx float64) (low, tot float64) {
	q = q[:len(p)]
	klo, khi := kx*(1-gbvTie), kx*(1+gbvTie)
	qmin := 0x1p-999 / kx // below it kx·q may be subnormal, too coarse to bound
	// below returns q(y) where y ranks below x, else 0, and q(y): the
	// comparisons' outcomes are random, so they set masks, not branches.
	below := func(y int) (float64, float64) {
		py, qy := float64(p[y]), float64(q[y])
		var mask, above uint64
		if py < klo*qy {
			mask = ^uint64(0)
		}
		if py > khi*qy {
			above = ^uint64(0)
		}
		if mask|above == 0 || qy < qmin { // near a tie, or a product too small to bound
			if qy > 0 && gbvCmp(py/qy, y, kx, x) < 0 {
				mask = ^uint64(0)
			}
		}
		return math.Float64frombits(math.Float64bits(qy) & mask), qy
	}
	var l0, l1, t0, t1 float64
	y := 0
	for ; y+2 <= len(p); y += 2 {
		a0, b0 := below(y)
		a1, b1 := below(y + 1)
		l0, t0 = l0+a0, t0+b0
		l1, t1 = l1+a1, t1+b1
	}
	if y < len(p) {
		a0, b0 := below(y)
		l0, t0 = l0+a0, t0+b0
	}
	return l0 + l1, t0 + t1
}

// Bucket classes of gbvScratch.cls.
const (
	gbvNone  = iota // every residual ≤ 0
	gbvPos          // every residual > 0: the bucket adds w·Σp − Σv/S
	gbvMixed        // summed token by token
)

// gbvTok is a token gathered from a bucket: its key, rows, residual r and
// bucket b.
type gbvTok struct {
	key, p, q, r float64
	y, b         int
}

// The buckets of keys: bucket 0 holds the keys 0, bucket b in 1..gbvSpan
// the keys whose bits, shifted right by gbvShift, equal gbvBase + b − 1
// (1/64 of a binade each, from 2^-64 to 2^64); keys below or above that
// range join the first or the last.
const (
	gbvShift = 46
	gbvBase  = (1023 - 64) << 6
	gbvSpan  = 128 << 6
)

// gbvScratch holds one depth's buckets, used from lo to hi.
type gbvScratch struct {
	bkt            []int32   // bucket, or -1 where q = 0
	head, next     []int32   // each bucket's tokens as a list: head[b], next[y] (-1 ends)
	qb, pb, rb, lb []float64 // per bucket: Σq, Σp, residual, draft mass below
	cls            []uint8
	toks, one      []gbvTok // the mixed buckets' tokens; one bucket's
	lo, hi         int
	p0             float64 // Σ p where q = 0 (s = 0 there)
}

var gbvPool = sync.Pool{New: func() any { return new(gbvScratch) }}

// build fills the buckets of lv's rows.
func (sc *gbvScratch) build(lv *gbvLevel) {
	if sc.qb == nil {
		sc.qb, sc.pb = make([]float64, gbvSpan+1), make([]float64, gbvSpan+1)
		sc.rb, sc.lb, sc.cls = make([]float64, gbvSpan+1), make([]float64, gbvSpan+1), make([]uint8, gbvSpan+1)
		sc.head = make([]int32, gbvSpan+1)
		for b := range sc.head {
			sc.head[b] = -1
		}
	} else if sc.lo <= sc.hi { // the last depth's range: every other entry is 0 (head -1)
		clear(sc.qb[sc.lo : sc.hi+1])
		clear(sc.pb[sc.lo : sc.hi+1])
		for b := sc.lo; b <= sc.hi; b++ {
			sc.head[b] = -1
		}
	}
	sc.bkt = growInt32(sc.bkt, lv.p.Len())
	sc.next = growInt32(sc.next, lv.p.Len())
	p32, p64 := lv.p.Data()
	q32, q64 := lv.q.Data()
	switch {
	case p32 != nil && q32 != nil:
		gbvFill(sc, p32, q32)
	case p64 != nil && q64 != nil:
		gbvFill(sc, p64, q64)
	default:
		gbvFill(sc, lv.p.Float64s(nil), lv.q.Float64s(nil))
	}
}

// growInt32 returns s resized to n entries.
func growInt32(s []int32, n int) []int32 { return slices.Grow(s[:0], n)[:n] }

// gbvFill is build over the rows' storage, in one pass.
func gbvFill[F float32 | float64](sc *gbvScratch, p, q []F) {
	q = q[:len(p)]
	lo, hi, p0 := gbvSpan, 0, 0.0
	for y := range p {
		py, qy := float64(p[y]), float64(q[y])
		if !(qy > 0) {
			sc.bkt[y] = -1
			p0 += py
			continue
		}
		b := 0
		if k := py / qy; k > 0 {
			b = 1 + min(max(int(math.Float64bits(k)>>gbvShift)-gbvBase, 0), gbvSpan-1)
		}
		sc.bkt[y] = int32(b)
		sc.next[y], sc.head[b] = sc.head[b], int32(y)
		sc.qb[b] += qy
		sc.pb[b] += py
		lo, hi = min(lo, b), max(hi, b)
	}
	sc.lo, sc.hi, sc.p0 = lo, hi, p0
}

// bounds returns the least and the supremum of bucket b's keys.
func (sc *gbvScratch) bounds(b int) (float64, float64) {
	if b == 0 {
		return 0, 0
	}
	lo := math.Float64frombits(uint64(gbvBase+b-1) << gbvShift)
	hi := math.Float64frombits(uint64(gbvBase+b) << gbvShift)
	if b == 1 {
		lo = 0
	}
	if b == gbvSpan {
		hi = math.Inf(1)
	}
	return lo, hi
}

// gbvSure is the relative margin by which a bucket's keys must clear the
// bounds of s/q for it to be classed without its tokens (the rounding of
// s is far inside).
const gbvSure = 1e-9

// residual returns Z = Σ_y (w·p(y) − s(y))+ of the built buckets for the
// level lv, classing every bucket and summing the mixed ones' tokens.
func (sc *gbvScratch) residual(lv *gbvLevel, w float64) float64 {
	z, low, mixed := w*sc.p0, 0.0, false
	norm := lv.den * lv.sTot
	for b := sc.lo; b <= sc.hi; b++ {
		qb := sc.qb[b]
		sc.lb[b], sc.rb[b], sc.cls[b] = low, 0, gbvNone
		if qb == 0 {
			continue
		}
		c, a := lv.beta+lv.rho*low, lv.beta+lv.rho*(low+qb)
		klo, khi := sc.bounds(b)
		switch {
		case b == 0 || w*khi < gbvH(c, c, lv.k)/norm*(1-gbvSure):
		case w*klo > gbvH(a, a, lv.k)/norm*(1+gbvSure):
			sc.cls[b] = gbvPos
			sc.rb[b] = max(0, w*sc.pb[b]-qb*gbvH(a, c, lv.k)/lv.den/lv.sTot)
			z += sc.rb[b]
		default:
			sc.cls[b] = gbvMixed
			mixed = true
		}
		low += qb
	}
	sc.toks = sc.toks[:0]
	if mixed {
		sc.toks = sc.gather(lv, sc.toks, -1)
		z += sc.walk(lv, w, sc.toks)
	}
	return z
}

// gather appends the tokens of bucket one (one < 0: of every mixed
// bucket) to toks, sorted by key and token (gbvCmp), which keeps each
// bucket's tokens together.
func (sc *gbvScratch) gather(lv *gbvLevel, toks []gbvTok, one int) []gbvTok {
	add := func(b int) {
		for y := int(sc.head[b]); y >= 0; y = int(sc.next[y]) {
			toks = append(toks, gbvTok{key: gbvKey(lv.p, lv.q, y), p: lv.p.At(y), q: lv.q.At(y), y: y, b: b})
		}
	}
	if one >= 0 {
		add(one)
	} else {
		for b := sc.lo; b <= sc.hi; b++ {
			if sc.cls[b] == gbvMixed {
				add(b)
			}
		}
	}
	slices.SortFunc(toks, func(s, t gbvTok) int { return gbvCmp(s.key, s.y, t.key, t.y) })
	return toks
}

// walk writes each gathered token's residual (w·p − s)+, s from the draft
// mass below it, and returns their sum.
func (sc *gbvScratch) walk(lv *gbvLevel, w float64, toks []gbvTok) float64 {
	z, low, cur := 0.0, 0.0, -1
	for i := range toks {
		t := &toks[i]
		if t.b != cur {
			cur, low = t.b, sc.lb[t.b]
		}
		a, c := lv.beta+lv.rho*(low+t.q), lv.beta+lv.rho*low
		t.r = max(0, w*t.p-t.q*gbvH(a, c, lv.k)/lv.den/lv.sTot)
		z += t.r
		low += t.q
	}
	return z
}

// sample returns the token at target of the residual whose buckets
// residual classed: the tokens with q = 0 first (index order), then the
// buckets in key order; past the end (rounding) the last token with a
// positive residual, or -1 if there is none.
func (sc *gbvScratch) sample(lv *gbvLevel, w, target float64) int {
	cum, last := 0.0, -1
	if g := w * sc.p0; g > 0 {
		if cum+g > target {
			return sc.sampleFree(lv, w, target)
		}
		cum += g
		last = -2 // a token with q = 0
	}
	ti := 0
	for b := sc.lo; b <= sc.hi; b++ {
		var toks []gbvTok
		switch sc.cls[b] {
		case gbvNone:
			continue
		case gbvPos:
			if cum+sc.rb[b] <= target {
				cum += sc.rb[b]
				if sc.rb[b] > 0 {
					last = b
				}
				continue
			}
			toks = sc.one1(lv, w, b)
		case gbvMixed:
			start := ti
			for ti < len(sc.toks) && sc.toks[ti].b == b {
				ti++
			}
			toks = sc.toks[start:ti]
		}
		for _, t := range toks {
			if t.r > 0 {
				if cum += t.r; cum > target {
					return t.y
				}
				last = b
			}
		}
	}
	return sc.lastPositive(lv, w, last)
}

// one1 gathers and walks bucket b's tokens alone.
func (sc *gbvScratch) one1(lv *gbvLevel, w float64, b int) []gbvTok {
	sc.one = sc.gather(lv, sc.one[:0], b)
	sc.walk(lv, w, sc.one)
	return sc.one
}

// sampleFree returns the token at target among those with q = 0 (index
// order; the residual there is w·p).
func (sc *gbvScratch) sampleFree(lv *gbvLevel, w, target float64) int {
	cum, last := 0.0, -1
	for y, b := range sc.bkt {
		if b < 0 {
			if r := w * lv.p.At(y); r > 0 {
				last = y
				if cum += r; cum > target {
					return y
				}
			}
		}
	}
	return last
}

// lastPositive returns the last token with a positive residual in the
// walk's order, given the last bucket that had one (-2: the tokens with
// q = 0; -1: none).
func (sc *gbvScratch) lastPositive(lv *gbvLevel, w float64, b int) int {
	switch b {
	case -1:
		return -1
	case -2:
		return sc.sampleFree(lv, w, math.Inf(1))
	}
	toks := sc.toks
	if sc.cls[b] == gbvPos {
		toks = sc.one1(lv, w, b)
	}
	for i := len(toks) - 1; i >= 0; i-- {
		if toks[i].b == b && toks[i].r > 0 {
			return toks[i].y
		}
	}
	return -1
}

// residual returns Z_i of level lv at weight w: block verification's
// blockZ where s = q, else from the buckets (built here).
func (lv *gbvLevel) residual(sc *gbvScratch, w float64) float64 {
	if !lv.skew || w == 0 {
		return blockZ(w, lv.p, lv.q)
	}
	sc.build(lv)
	return sc.residual(lv, w)
}

// next draws the token after τ = this level at uniform u from
// norm((w·p − s)+) of mass z (residual just computed), or from p where
// that is empty, as blockNext does.
func (lv *gbvLevel) next(sc *gbvScratch, u, w, z float64) int {
	if z > 0 {
		y := -1
		if lv.skew {
			y = sc.sample(lv, w, u*z)
		} else {
			y = sim.SampleResidual(u, w, lv.p, lv.q, z)
		}
		if y >= 0 {
			return y
		}
	}
	return sim.SampleRow(u, lv.p)
}

// levels selects t's path as prepare does and fills lv with its depths
// (s(x) of each) and nodes with its nodes; it returns the path's length.
func (r MultipathBlock) levels(t *sim.Tree, lv *[sim.MaxTreeDepth]gbvLevel, nodes *[sim.MaxTreeDepth + 1]int) (int, error) {
	k, n, d := 0, 0, 0
	beta, rho := 0.0, 1.0
	for len(t.Nodes[n].Kids) > 0 {
		nd := &t.Nodes[n]
		if nd.Q.IsZero() {
			return 0, errNoQ(n)
		}
		c := gbvChild(t, n)
		if k == 0 && len(nd.Draws) > 1 {
			k = len(nd.Draws)
		}
		l := &lv[d]
		*l = gbvLevel{p: nd.P, q: nd.Q, x: t.Nodes[c].Token}
		if r.plainQ || k <= 1 {
			l.sx = nd.Q.At(l.x)
		} else {
			beta, rho = l.setSkew(beta, rho, k)
		}
		d++
		n = c
		nodes[d] = n
	}
	return d, nil
}

// accept is AcceptTree: block verification's lazy form (blockLazy) on the
// levels, drawing the same uniforms in the same order.
func (r MultipathBlock) accept(rng *rand.Rand, t *sim.Tree) (sim.TreeOutcome, error) {
	var lv [sim.MaxTreeDepth]gbvLevel
	var nodes [sim.MaxTreeDepth + 1]int
	d, err := r.levels(t, &lv, &nodes)
	if err != nil {
		return sim.TreeOutcome{}, err
	}
	if d == 0 { // no draft: the target's own next token
		return sim.TreeOutcome{Node: 0, Next: sim.SampleRow(rng.Float64(), t.Nodes[0].P)}, nil
	}
	var eta, w blockScratch
	for i := 1; i <= d; i++ {
		eta[i] = rng.Float64()
	}
	w[0] = 1
	for i := range d {
		w[i+1] = math.Min(w[i]*lv[i].p.At(lv[i].x)/lv[i].sx, 1)
	}
	if eta[d] < w[d] {
		return sim.TreeOutcome{Node: nodes[d], Next: sim.SampleRow(rng.Float64(), t.Nodes[nodes[d]].P)}, nil
	}
	sc := gbvPool.Get().(*gbvScratch)
	defer gbvPool.Put(sc)
	for i := d - 1; i >= 0; i-- {
		if i > 0 && !(eta[i] < w[i]) {
			continue // h_i ≤ w_i ≤ η_i: fails whatever Z_i is
		}
		z := lv[i].residual(sc, w[i])
		if i == 0 || eta[i] < blockH(z, w[i]) {
			return sim.TreeOutcome{Node: nodes[i], Next: lv[i].next(sc, rng.Float64(), w[i], z)}, nil
		}
	}
	panic("unreachable") // i = 0 always returns
}
