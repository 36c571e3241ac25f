package algos

import (
	"math"
	"math/rand/v2"
	"sync"

	"github.com/specsim/specsim/sim"
)

// This file holds the tree (multi-draft) verifiers of docs/rules.md, "Tree (multi-draft) rules", that
// decide node by node: at the current node they either accept one child
// (and move there) or emit a token and stop; at a leaf they emit the bonus
// token from the leaf's target row. A shared driver walks the tree
// (walkAccept) and computes the exact law (walkLaw) from each rule's
// per-node step and per-node law.

// nodeRule is one verifier's decision at an internal node.
type nodeRule interface {
	// step returns the accepted child, or -1 and the emitted token.
	step(rng *rand.Rand, t *sim.Tree, n int) (child, tok int)
	// stepLaw writes the probability of accepting each child (kid, indexed
	// like Nodes[n].Kids) and the unnormalised emission masses (emit,
	// length V); together they sum to 1.
	stepLaw(t *sim.Tree, n int, kid, emit []float64)
}

func walkAccept(r nodeRule, rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	n := 0
	for {
		if len(t.Nodes[n].Kids) == 0 {
			return sim.TreeOutcome{Node: n, Next: sim.SampleRow(rng.Float64(), t.Nodes[n].P)}
		}
		c, y := r.step(rng, t, n)
		if c < 0 {
			return sim.TreeOutcome{Node: n, Next: y}
		}
		n = c
	}
}

func walkLaw(r nodeRule, t *sim.Tree, dst *sim.TreeLaw) error {
	dst.Reset(len(t.Nodes), t.V)
	var rec func(n int, reach float64)
	rec = func(n int, reach float64) {
		nd := &t.Nodes[n]
		if len(nd.Kids) == 0 {
			dst.AddRow(n, reach, nd.P)
			return
		}
		kid := make([]float64, len(nd.Kids))
		emit := make([]float64, t.V)
		r.stepLaw(t, n, kid, emit)
		for i, m := range emit {
			if m != 0 {
				dst.Add(n, i, reach*m)
			}
		}
		for i, c := range nd.Kids {
			if kid[i] > 0 {
				rec(c, reach*kid[i])
			}
		}
	}
	rec(0, 1)
	return nil
}

// kidIndex returns the position of child c among Nodes[n].Kids.
func kidIndex(t *sim.Tree, n, c int) int {
	for i, k := range t.Nodes[n].Kids {
		if k == c {
			return i
		}
	}
	panic("algos: draw is not a child")
}

// loadRow copies r into dst.
func loadRow(dst []float64, r sim.Row) {
	for i := range dst {
		dst[i] = r.At(i)
	}
}

// residualStep replaces r (a normalised vector) by norm((r - q)+). If
// rounding leaves the residual empty it keeps r: a rejection that happens
// with probability zero must still leave something to emit.
func residualStep(r []float64, q func(int) float64) {
	s := 0.0
	for i, v := range r {
		if d := v - q(i); d > 0 {
			s += d
		}
	}
	if !(s > 0) {
		return
	}
	for i, v := range r {
		if d := v - q(i); d > 0 {
			r[i] = d / s
		} else {
			r[i] = 0
		}
	}
}

// sampleMass returns the inverse-CDF sample of the unnormalised vector w at
// u ∈ [0,1): the first x with Σ_{y≤x} w(y) > u·Σw (last positive entry on
// rounding).
func sampleMass(u float64, w []float64) int {
	s := 0.0
	for _, v := range w {
		if v > 0 {
			s += v
		}
	}
	target := u * s
	c := 0.0
	last := -1
	for i, v := range w {
		if v > 0 {
			c += v
			last = i
			if c > target {
				return i
			}
		}
	}
	return last
}

// The tree rules of this file, each with the draft kind it is lossless
// for (the mutant topk-ratio: RRSWithout on deterministic top-k children).
func init() {
	RegisterTree(TreeEntry{Info: Info{Name: "specinfer", Summary: "multi-round rejection sampling with replacement over i.i.d. drafts (SpecInfer, MCSD)",
		Paper: "Miao et al. 2024, arXiv 2305.09781; Yang et al. 2024, arXiv 2401.06706",
		Draft: sim.DraftIID, NeedsQ: true}, New: treeNoParams(SpecInfer{})})
	RegisterTree(TreeEntry{Info: Info{Name: "rrs-wor", Summary: "recursive rejection sampling without replacement (RSD, EAGLE-1)",
		Paper: "Jeon et al. 2024, arXiv 2402.14160; EAGLE-1 (SafeAILab/EAGLE before June 2024)",
		Draft: sim.DraftWOR, NeedsQ: true, Distinct: true}, New: treeNoParams(RRSWithout{})})
	RegisterTree(TreeEntry{Info: Info{Name: "kseq", Summary: "SpecTr K-SEQ with rho* by bisection over i.i.d. drafts",
		Paper: "Sun et al. 2023, arXiv 2310.15141, Alg. 2",
		Draft: sim.DraftIID, NeedsQ: true}, New: treeNoParams(KSeq{})})
	RegisterTree(TreeEntry{Info: Info{Name: "target-only", Summary: "membership rule for deterministic children: accept a child w.p. p, zero rejected siblings (EAGLE-2, SGLang)",
		Paper: "EAGLE-2 evaluate_posterior (SafeAILab/EAGLE bfeb532); SGLang TreeSpeculativeSamplingTargetOnly",
		Draft: sim.DraftTopK}, New: treeNoParams(TargetOnly{})})
	RegisterTree(TreeEntry{Info: Info{Name: "greedy-draft", Summary: "top-(k-1) draft tokens plus one sample from the rest, with the matching optimal verifier",
		Paper: "Hu et al. 2025, arXiv 2502.18779",
		Draft: sim.DraftGreedy, NeedsQ: true}, New: treeNoParams(GreedyDraft{})})
	// The planted bug: RRSWithout's ratio test on children that were not
	// drawn from q.
	RegisterTree(TreeEntry{Info: Info{Name: "topk-ratio", Mutant: true, Summary: "min(1, p/q) recursive rejection applied to deterministic top-k children (not drawn from q)",
		Paper: "SafeAILab/EAGLE issues 183 and 221: min(1, p/q) is lossless only for children drawn from q",
		Draft: sim.DraftTopK, NeedsQ: true, Distinct: true}, New: treeNoParams(RRSWithout{})})
}

// SpecInfer is multi-round rejection sampling with replacement (RRS), the
// verifier of SpecInfer (Miao et al., arXiv 2305.09781, ASPLOS'24,
// "multi-step speculative sampling") and MCSD (Yang et al., arXiv
// 2401.06706) for children drawn i.i.d. from q. At a node with target p
// and draws x_1..x_m (in draw order, repeats kept) it sets r_1 = p and for
// i = 1..m accepts x_i when u_i < r_i(x_i)/q(x_i), i.e. with probability
// min(1, r_i(x_i)/q(x_i)), otherwise
//
//	r_{i+1} = norm((r_i - q)+);
//
// if all are rejected it emits a token from r_{m+1}. An accepted child is
// verified the same way against its own children; a leaf emits the bonus
// token from its target row. Lossless for i.i.d. draws; at m = 1 it is
// token verification. Randomness: one uniform per examined draw and one
// for the emitted token.
type SpecInfer struct{}

func (SpecInfer) step(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	return specInferStep(rng, t, n) // scalar form, multi_fast.go
}

func (SpecInfer) stepLaw(t *sim.Tree, n int, kid, emit []float64) {
	nd := &t.Nodes[n]
	r := t.Scratch(0)
	loadRow(r, nd.P)
	reach := 1.0
	for _, c := range nd.Draws {
		x := t.Nodes[c].Token
		a := math.Min(1, r[x]/nd.Q.At(x))
		kid[kidIndex(t, n, c)] += reach * a
		reach *= 1 - a
		residualStep(r, nd.Q.At)
	}
	addNorm(emit, reach, r)
}

// addNorm adds mass·w/Σw to dst.
func addNorm(dst []float64, mass float64, w []float64) {
	if mass == 0 {
		return
	}
	s := sumOf(w)
	for i, v := range w {
		if v > 0 {
			dst[i] += mass * v / s
		}
	}
}

// AcceptTree runs one step.
func (s SpecInfer) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	return walkAccept(s, rng, t)
}

// TreeLaw writes the exact outcome law given t.
func (s SpecInfer) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error { return walkLaw(s, t, dst) }

// RRSWithout is recursive rejection sampling without replacement: the
// verifier of Recursive Speculative Decoding (Jeon et al., arXiv
// 2402.14160), of EAGLE-1's sampling path (SafeAILab/EAGLE before June
// 2024) and of MCSD without replacement, for children drawn from q without
// replacement. At a node with target p, draft q and distinct draws
// x_1..x_m it sets r_1 = p, s_1 = q and for i = 1..m accepts x_i with
// probability min(1, r_i(x_i)/s_i(x_i)), otherwise
//
//	r_{i+1} = norm((r_i - s_i)+),  s_{i+1} = norm(s_i with x_i zeroed);
//
// after m rejections it emits a token from r_{m+1}. Lossless for
// children drawn without replacement from q; applied to deterministic
// top-k children it is biased (the mutant topk-ratio).
// Randomness: one uniform per examined draw and one for the emitted token.
type RRSWithout struct{}

func (RRSWithout) run(rng *rand.Rand, t *sim.Tree, n int, kid, emit []float64) (int, int) {
	nd := &t.Nodes[n]
	r, s := t.Scratch(0), t.Scratch(1)
	loadRow(r, nd.P)
	loadRow(s, nd.Q)
	sAt := func(i int) float64 { return s[i] }
	reach := 1.0
	for _, c := range nd.Draws {
		x := t.Nodes[c].Token
		a := math.Min(1, r[x]/s[x])
		if kid != nil {
			kid[kidIndex(t, n, c)] += reach * a
			reach *= 1 - a
		} else if rng.Float64() < r[x]/s[x] {
			return c, 0
		}
		residualStep(r, sAt)
		s[x] = 0
		if z := sim.Normalize(s); !(z > 0) {
			clear(s)
		}
	}
	if kid != nil {
		addNorm(emit, reach, r)
		return -1, 0
	}
	return -1, sampleMass(rng.Float64(), r)
}

func (w RRSWithout) step(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	return rrsWithoutStep(rng, t, n) // scalar form, multi_fast.go
}

func (w RRSWithout) stepLaw(t *sim.Tree, n int, kid, emit []float64) { w.run(nil, t, n, kid, emit) }

// AcceptTree runs one step.
func (w RRSWithout) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	return walkAccept(w, rng, t)
}

// TreeLaw writes the exact outcome law given t.
func (w RRSWithout) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error { return walkLaw(w, t, dst) }

// KSeq is SpecTr's K-SEQ verifier (Sun, Suresh, Ro, Beirami, Jain, Yu,
// "SpecTr: Fast Speculative Decoding via Optimal Transport", arXiv
// 2310.15141, NeurIPS'23, Algorithm 2) for m children drawn i.i.d. from q.
// With
//
//	b(ρ) = Σ_x min(q(x), p(x)/ρ),  c(ρ) = (1 - (1-b)^m)/b = Σ_{j<m} (1-b)^j,
//
// ρ* is the smallest ρ in [1, m] with c(ρ) ≤ ρ (found by bisection; the
// upper end of the final bracket is used, so the condition holds exactly).
// Draws are examined in order and x_i is accepted when u_i <
// p(x_i)/(ρ* q(x_i)); if all m are rejected it emits from
//
//	p_res(x) = [p(x) - min(q(x), p(x)/ρ*)·c(ρ*)] / (1-b)^m.
//
// Lossless over the i.i.d. draws; acceptance (a drafted token accepted)
// 1 - (1-b(ρ*))^m ≥ (1 - 1/e)·optimal. At m = 1, ρ* = 1 and it is token
// verification. Randomness: one uniform per examined draw and one for the
// emitted token.
type KSeq struct{}

// KSeqRho returns ρ* and b(ρ*) for target p, draft q and m i.i.d. draws.
func KSeqRho(p, q sim.Row, m int) (rho, b float64) {
	bAt := func(rho float64) float64 {
		s := 0.0
		for i := 0; i < p.Len(); i++ {
			s += math.Min(q.At(i), p.At(i)/rho)
		}
		return s
	}
	ok := func(rho float64) (bool, float64) {
		b := bAt(rho)
		c, pw := 0.0, 1.0
		for range m {
			c += pw
			pw *= 1 - b
		}
		return c <= rho, b
	}
	if good, b1 := ok(1); good {
		return 1, b1
	}
	lo, hi := 1.0, float64(m)
	for range 100 {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		if good, _ := ok(mid); good {
			hi = mid
		} else {
			lo = mid
		}
	}
	_, b = ok(hi)
	return hi, b
}

// kseqRhoFast is KSeqRho for the sampler. It runs the bisection on [1, m]
// with KSeqRho's midpoints (where KSeqRho sums b(ρ) over V at each of its
// ~52 steps) in two phases. While a step's decision is certain it evaluates
// b(x) = Σp/x - sim.ResidualMass(1/x, p, q) with the row kernels, whose
// error (float32 rows: below 16·2^-24 of the masses, sim/row32.go) is far
// inside the margin kseqMargin that the decision c(b ± kseqMargin) ≤ x
// must hold by. Then one pass over V splits the tokens for the bracket
// [lo, hi] left,
//
//	b(ρ) = Σ_{ρ_x ≤ lo} p(x)/ρ + Σ_{ρ_x ≥ hi} q(x) + Σ_{lo < ρ_x < hi} min(q(x), p(x)/ρ),
//
// with ρ_x = p(x)/q(x), and the remaining steps run on the few tokens in
// the bracket, moving out those the next bracket leaves. The sums are the
// direct form's, added in another order, so ρ* and b agree with KSeqRho's
// to rounding (TestKSeqRhoSplit: 1e-9 relative). The law (stepLaw) keeps
// KSeqRho, bit for bit as before.
func kseqRhoFast(p, q sim.Row, m int) (rho, b float64) {
	if m <= 1 {
		s := 0.0
		for i := 0; i < p.Len(); i++ {
			s += min(q.At(i), p.At(i))
		}
		return 1, s
	}
	c := func(b float64) float64 {
		c, pw := 0.0, 1.0
		for range m {
			c += pw
			pw *= 1 - b
		}
		return c
	}
	lo, hi, steps := kseqCoarse(p, q, m, c)
	return kseqFinish(p, q, m, c, lo, hi, steps)
}

// kseqFinish runs kseqRhoFast's exact phase from kseqCoarse's bracket: ρ*
// lies in [lo, hi] (steps = 0: ρ* may be 1 = lo).
func kseqFinish(p, q sim.Row, m int, c func(float64) float64, lo, hi float64, steps int) (rho, b float64) {
	sc := kseqPool.Get().(*kseqScratch)
	defer kseqPool.Put(sc)
	mid, pl, qh := sc.split(p, q, lo, hi)
	defer func() { sc.mid = mid[:0] }()
	bAt := func(rho float64) float64 {
		s := 0.0
		for _, v := range mid {
			s += min(v.q, v.p/rho)
		}
		return qh + pl/rho + s
	}
	if steps == 0 {
		if b1 := bAt(1); c(b1) <= 1 {
			return 1, b1
		}
		steps = 1
	}
	for ; steps < 100; steps++ {
		x := (lo + hi) / 2
		if x <= lo || x >= hi {
			break
		}
		if c(bAt(x)) <= x {
			hi = x
		} else {
			lo = x
		}
		keep := mid[:0]
		for _, v := range mid {
			switch {
			case v.r <= lo:
				pl += v.p
			case v.r >= hi:
				qh += v.q
			default:
				keep = append(keep, v)
			}
		}
		mid = keep
	}
	return hi, bAt(hi)
}

// kseqCoarse runs kseqRhoFast's first phase: the bisection's steps (step
// 0 is the test at ρ = 1) while the kernel's b decides them by kseqMargin
// and the bracket is wider than kseqWidth. It returns the bracket and the steps taken; steps = 0 means
// the test at ρ = 1 was left to the exact phase.
func kseqCoarse(p, q sim.Row, m int, c func(float64) float64) (lo, hi float64, steps int) {
	lo, hi = 1.0, float64(m)
	sp := kernelSum(p)
	for ; steps < 100; steps++ {
		x := lo
		if steps > 0 {
			x = (lo + hi) / 2
		}
		if x <= lo && steps > 0 || x >= hi || hi-lo <= kseqWidth*lo {
			break
		}
		bt := sp/x - sim.ResidualMass(1/x, p, q)
		good := c(bt-kseqMargin) <= x-1e-12 // c falls as b grows
		if !good && !(c(bt+kseqMargin) > x+1e-12) {
			break // uncertain: decide exactly
		}
		if steps == 0 {
			if good {
				break // ρ* = 1: the exact phase confirms it
			}
			continue
		}
		if good {
			hi = x
		} else {
			lo = x
		}
	}
	return lo, hi, steps
}

// kernelSum returns Σ p for kseqCoarse: for float32 rows by the vectorised
// kernel, as ResidualMass(1, p, 0) over a zero row (within the kernel's
// error, 16·2^-24 of the mass, which kseqMargin covers), else p.Sum().
func kernelSum(p sim.Row) float64 {
	p32, _ := p.Data()
	if p32 == nil {
		return p.Sum()
	}
	sc := kseqPool.Get().(*kseqScratch)
	defer kseqPool.Put(sc)
	if len(sc.zero) < len(p32) {
		sc.zero = make([]float32, len(p32))
	}
	return sim.ResidualMass(1, p, sim.F32(sc.zero[:len(p32)]))
}

// kseqWidth is the relative bracket width at which kseqCoarse stops: a
// draw's test is then settled by the bracket unless its uniform falls in a
// band about this wide, and the exact phase starts from the tokens inside.
const kseqWidth = 1e-3

// kseqMargin bounds the error of KSeqRho's kernel evaluations of b: the
// float32 kernels' error is below 16·2^-24·(Σ p/x + Σ q) ≤ 2e-6, and
// kernelSum's Σ p adds at most 16·2^-24·Σ p/x ≤ 1e-6.
const kseqMargin = 1e-5

// split returns the tokens with lo < ρ_x < hi (mid), Σ p over ρ_x ≤ lo and
// Σ q over ρ_x ≥ hi, in one pass without a division or a branch on the
// common cases (the comparisons p ≤ lo·q and p ≥ hi·q pick bits).
func (sc *kseqScratch) split(p, q sim.Row, lo, hi float64) ([]kseqItem, float64, float64) {
	p32, p64 := p.Data()
	q32, q64 := q.Data()
	if p32 != nil && q32 != nil {
		return splitRows(sc.mid[:0], p32, q32, lo, hi)
	}
	if p64 != nil && q64 != nil {
		return splitRows(sc.mid[:0], p64, q64, lo, hi)
	}
	return splitRows(sc.mid[:0], p.Float64s(nil), q.Float64s(nil), lo, hi)
}

// splitRows is split over the rows' own storage.
func splitRows[F float32 | float64](mid []kseqItem, p, q []F, lo, hi float64) ([]kseqItem, float64, float64) {
	q = q[:len(p)]
	pick := func(x, y float64) (float64, float64, bool) {
		var ml, mh uint64
		if x <= lo*y {
			ml = ^uint64(0)
		}
		if x >= hi*y {
			mh = ^uint64(0)
		}
		return math.Float64frombits(math.Float64bits(x) & ml),
			math.Float64frombits(math.Float64bits(y) & mh &^ ml), ml|mh == 0
	}
	// two running sums each, so the additions need not wait on each other
	var pl0, pl1, qh0, qh1 float64
	i := 0
	for ; i+2 <= len(p); i += 2 {
		x0, y0 := float64(p[i]), float64(q[i])
		x1, y1 := float64(p[i+1]), float64(q[i+1])
		a0, b0, in0 := pick(x0, y0)
		a1, b1, in1 := pick(x1, y1)
		pl0, qh0 = pl0+a0, qh0+b0
		pl1, qh1 = pl1+a1, qh1+b1
		if in0 {
			mid = append(mid, kseqItem{x0 / y0, x0, y0})
		}
		if in1 {
			mid = append(mid, kseqItem{x1 / y1, x1, y1})
		}
	}
	for ; i < len(p); i++ {
		x, y := float64(p[i]), float64(q[i])
		a, b, in := pick(x, y)
		pl0, qh0 = pl0+a, qh0+b
		if in {
			mid = append(mid, kseqItem{x / y, x, y})
		}
	}
	return mid, pl0 + pl1, qh0 + qh1
}

// kseqItem is one token whose ratio lies inside the bisection's bracket.
type kseqItem struct{ r, p, q float64 }

type kseqScratch struct {
	mid  []kseqItem
	zero []float32 // kernelSum's zero row, never written
}

var kseqPool = sync.Pool{New: func() any { return new(kseqScratch) }}

// kseqResidual writes the unnormalised p_res into dst.
func kseqResidual(dst []float64, p, q sim.Row, rho, b float64, m int) {
	c, pw := 0.0, 1.0
	for range m {
		c += pw
		pw *= 1 - b
	}
	for i := range dst {
		px := p.At(i)
		dst[i] = max(0, px-min(q.At(i), px/rho)*c) // as math.Max, math.Min on numbers
	}
}

// step examines the draws before it computes anything of size V: at a
// node with one draw ρ* = 1 and c(ρ*) = 1 whatever b is (TestKSeqRhoSplit),
// so only a node with several draws searches ρ*, and only a rejection
// writes the residual.
//
// With several draws it first brackets ρ* by kseqCoarse alone and finishes
// the search (a pass over V) only when a draw's test u < p/(ρ* q) is not
// settled by the bracket (u between p/(hi·q) and p/(lo·q), a band of
// relative width at most about kseqWidth) or all draws are rejected: the test's
// rounded value falls as ρ grows, so the bracket's ends bound it.
func (KSeq) step(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	nd := &t.Nodes[n]
	m := len(nd.Draws)
	rho, b := 1.0, 0.0
	lo, hi, exact := 1.0, 1.0, true
	var steps int
	c := func(b float64) float64 {
		c, pw := 0.0, 1.0
		for range m {
			c += pw
			pw *= 1 - b
		}
		return c
	}
	if m > 1 {
		lo, hi, steps = kseqCoarse(nd.P, nd.Q, m, c)
		exact = false
	}
	for _, d := range nd.Draws {
		x := t.Nodes[d].Token
		px, qx := nd.P.At(x), nd.Q.At(x)
		u := rng.Float64()
		if !exact {
			if u < px/(hi*qx) {
				return d, 0
			}
			if !(u < px/(lo*qx)) {
				continue
			}
			rho, b = kseqFinish(nd.P, nd.Q, m, c, lo, hi, steps)
			exact = true
		}
		if u < px/(rho*qx) {
			return d, 0
		}
	}
	if !exact {
		rho, b = kseqFinish(nd.P, nd.Q, m, c, lo, hi, steps)
	}
	if y := kseqSample(rng.Float64(), nd.P, nd.Q, rho, b, len(nd.Draws)); y >= 0 {
		return -1, y
	}
	return -1, sim.SampleRow(rng.Float64(), nd.P)
}

// kseqSample returns sampleMass's token for kseqResidual's weights (-1 if
// they are all zero) without writing them. With one draw (m = 1) the
// weights max(0, p - min(q, p)) are max(0, p - q), which the row kernel
// sim.SampleResidualMass samples in one vectorised pass. Otherwise one
// pass sums each block of massBlock weights (four running sums, so the
// additions do not wait on each other), and the block the target falls in
// is summed again one by one. The sums differ from sampleMass's index order by rounding, so the
// token can differ only where u·Σw lies within rounding of a cumulative
// sum (TestKSeqSample).
func kseqSample(u float64, p, q sim.Row, rho, b float64, m int) int {
	if m == 1 { // ρ* = c = 1: the weights are max(0, p - q), token verification's residual
		y, _ := sim.SampleResidualMass(u, 1, p, q)
		return y
	}
	c, pw := 0.0, 1.0
	for range m {
		c += pw
		pw *= 1 - b
	}
	p32, p64 := p.Data()
	q32, q64 := q.Data()
	switch {
	case p32 != nil && q32 != nil:
		return kseqSampleRows(u, p32, q32, rho, c)
	case p64 != nil && q64 != nil:
		return kseqSampleRows(u, p64, q64, rho, c)
	}
	return kseqSampleRows(u, p.Float64s(nil), q.Float64s(nil), rho, c)
}

// kseqSampleRows is kseqSample over the rows' own storage, with c = c(ρ*).
func kseqSampleRows[F float32 | float64](u float64, p, q []F, rho, c float64) int {
	q = q[:len(p)]
	one := rho == 1            // px/1 = px: the same weights without a division
	w := func(i int) float64 { // one closure, never reassigned, so it inlines
		px := float64(p[i])
		r := px
		if !one {
			r = px / rho
		}
		return max(0, px-min(float64(q[i]), r)*c)
	}
	n := len(p)
	var ends [(1 << 17) / massBlock]float64
	nb := (n + massBlock - 1) / massBlock
	if nb > len(ends) {
		r := make([]float64, n)
		for i := range r {
			r[i] = w(i)
		}
		return sampleMass(u, r)
	}
	s := 0.0
	for k := range nb {
		i, end := k*massBlock, min(n, (k+1)*massBlock)
		var s0, s1, s2, s3 float64
		for ; i+4 <= end; i += 4 {
			s0 += w(i)
			s1 += w(i + 1)
			s2 += w(i + 2)
			s3 += w(i + 3)
		}
		for ; i < end; i++ {
			s0 += w(i)
		}
		s += (s0 + s1) + (s2 + s3)
		ends[k] = s
	}
	if !(s > 0) {
		return -1
	}
	target := u * s
	cum := 0.0
	for k := range nb {
		if !(ends[k] > target) {
			cum = ends[k]
			continue
		}
		last := -1
		for i := k * massBlock; i < min(n, (k+1)*massBlock); i++ {
			if v := w(i); v > 0 {
				last = i
				if cum += v; cum > target {
					return i
				}
			}
		}
		return last // rounding: the block's sum passed target, its scan not
	}
	for i := n - 1; i >= 0; i-- { // rounding: u·s at or above s
		if w(i) > 0 {
			return i
		}
	}
	return -1
}

func (KSeq) stepLaw(t *sim.Tree, n int, kid, emit []float64) {
	nd := &t.Nodes[n]
	rho, b := KSeqRho(nd.P, nd.Q, len(nd.Draws))
	reach := 1.0
	for _, c := range nd.Draws {
		x := t.Nodes[c].Token
		a := math.Min(1, nd.P.At(x)/(rho*nd.Q.At(x)))
		kid[kidIndex(t, n, c)] += reach * a
		reach *= 1 - a
	}
	if reach == 0 {
		return
	}
	r := t.Scratch(0)
	kseqResidual(r, nd.P, nd.Q, rho, b, len(nd.Draws))
	addNorm(emit, reach, r)
}

// AcceptTree runs one step.
func (k KSeq) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome { return walkAccept(k, rng, t) }

// TreeLaw writes the exact outcome law given t.
func (k KSeq) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error { return walkLaw(k, t, dst) }

// TargetOnly is the target-only membership rule for deterministic
// children: EAGLE-2/3 evaluate_posterior (SafeAILab/EAGLE
// eagle/model/utils.py, since commit bfeb532) and SGLang's
// TreeSpeculativeSamplingTargetOnly. At a node with target p it visits the
// distinct children x_1..x_m in order with r = p and accepts x_i with
// probability r(x_i)/Σr (q treated as 1); on rejection it sets r(x_i) = 0.
// After all are rejected it emits from norm(r). Equivalent to "draw y ~ p,
// accept iff y is a child", so it is lossless for any children and its
// acceptance is p(children). Randomness: one uniform per examined child
// and one for the emitted token.
type TargetOnly struct{}

// step reads p only at the children until all are rejected (they are
// distinct, so r(x) = p(x) when x is examined), and only then writes r.
func (TargetOnly) step(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	nd := &t.Nodes[n]
	rem := 1.0
	for _, c := range nd.Kids {
		px := nd.P.At(t.Nodes[c].Token)
		if rng.Float64() < px/rem {
			return c, 0
		}
		rem -= px
	}
	r := t.Scratch(0)
	loadRowFast(r, nd.P)
	for _, c := range nd.Kids {
		r[t.Nodes[c].Token] = 0
	}
	return -1, sampleMassBlocks(rng.Float64(), r)
}

// loadRowFast is loadRow over the row's own storage.
func loadRowFast(dst []float64, r sim.Row) {
	if r32, r64 := r.Data(); r32 != nil {
		for i, v := range r32[:len(dst)] {
			dst[i] = float64(v)
		}
	} else {
		copy(dst, r64)
	}
}

func (TargetOnly) stepLaw(t *sim.Tree, n int, kid, emit []float64) {
	nd := &t.Nodes[n]
	for i := range emit {
		emit[i] = nd.P.At(i)
	}
	for i, c := range nd.Kids {
		x := t.Nodes[c].Token
		kid[i] = emit[x]
		emit[x] = 0
	}
}

// AcceptTree runs one step.
func (r TargetOnly) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	return walkAccept(r, rng, t)
}

// TreeLaw writes the exact outcome law given t.
func (r TargetOnly) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error { return walkLaw(r, t, dst) }

// GreedyDraft is the verifier of Hu et al., "Towards Optimal Multi-draft
// Speculative Decoding" (arXiv 2502.18779, ICLR 2025) for greedy drafts:
// the first m-1 children D are the top tokens of q and the last child x is
// drawn from q' = q restricted to V \ D, renormalised. It accepts x with
// probability min(1, p(x)/q'(x)); otherwise it samples
//
//	y ∝ p(y)·1[y ∈ D] + (p(y) - q'(y))+·1[y ∉ D],
//
// moving to the child y when y ∈ D (it counts as accepted) and emitting y
// otherwise. Lossless; its acceptance p(D) + Σ_{x∉D} min(p(x), q'(x)) is
// the optimum for this draft law. At m = 1 (D empty) it is token
// verification. Randomness: two uniforms per node.
type GreedyDraft struct{}

func (GreedyDraft) parts(t *sim.Tree, n int, w []float64) (last int, a float64) {
	nd := &t.Nodes[n]
	m := len(nd.Draws)
	last = nd.Draws[m-1]
	rest := 1.0
	for _, c := range nd.Draws[:m-1] {
		rest -= nd.Q.At(t.Nodes[c].Token)
	}
	x := t.Nodes[last].Token
	a = math.Min(1, nd.P.At(x)*rest/nd.Q.At(x))
	for i := range w {
		w[i] = math.Max(0, nd.P.At(i)-nd.Q.At(i)/rest)
	}
	for _, c := range nd.Draws[:m-1] {
		y := t.Nodes[c].Token
		w[y] = nd.P.At(y)
	}
	return last, a
}

// step draws its first uniform before it writes the weights, which only a
// rejection needs: acceptance is O(k).
func (g GreedyDraft) step(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	nd := &t.Nodes[n]
	m := len(nd.Draws)
	last := nd.Draws[m-1]
	rest := 1.0
	for _, c := range nd.Draws[:m-1] {
		rest -= nd.Q.At(t.Nodes[c].Token)
	}
	x := t.Nodes[last].Token
	if rng.Float64() < math.Min(1, nd.P.At(x)*rest/nd.Q.At(x)) { // parts' a
		return last, 0
	}
	w := t.Scratch(0)
	greedyWeights(w, nd.P, nd.Q, rest)
	for _, c := range nd.Draws[:m-1] {
		y := t.Nodes[c].Token
		w[y] = nd.P.At(y)
	}
	y := sampleMassBlocks(rng.Float64(), w)
	if y < 0 {
		y = sim.SampleRow(rng.Float64(), t.Nodes[n].P)
	}
	if c := t.Child(n, y); c >= 0 {
		return c, 0
	}
	return -1, y
}

func (g GreedyDraft) stepLaw(t *sim.Tree, n int, kid, emit []float64) {
	w := t.Scratch(0)
	last, a := g.parts(t, n, w)
	kid[kidIndex(t, n, last)] += a
	if a == 1 {
		return
	}
	s := sumOf(w)
	for y, v := range w {
		if v <= 0 {
			continue
		}
		m := (1 - a) * v / s
		if c := t.Child(n, y); c >= 0 {
			kid[kidIndex(t, n, c)] += m
		} else {
			emit[y] += m
		}
	}
}

// greedyWeights writes parts' weights max(0, p - q/rest) over the rows'
// own storage.
func greedyWeights(w []float64, p, q sim.Row, rest float64) {
	p32, p64 := p.Data()
	q32, q64 := q.Data()
	switch {
	case p32 != nil && q32 != nil:
		greedyWeightsOf(w, p32, q32, rest)
	case p64 != nil && q64 != nil:
		greedyWeightsOf(w, p64, q64, rest)
	default:
		for i := range w {
			w[i] = math.Max(0, p.At(i)-q.At(i)/rest)
		}
	}
}

// greedyWeightsOf is greedyWeights over the rows' own storage.
func greedyWeightsOf[F float32 | float64](w []float64, p, q []F, rest float64) {
	p, q = p[:len(w)], q[:len(w)]
	for i := range w {
		w[i] = max(0, float64(p[i])-float64(q[i])/rest) // as math.Max on numbers
	}
}

// AcceptTree runs one step.
func (g GreedyDraft) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	return walkAccept(g, rng, t)
}

// TreeLaw writes the exact outcome law given t.
func (g GreedyDraft) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error { return walkLaw(g, t, dst) }
