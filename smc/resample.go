package smc

import (
	"math"
	"math/rand/v2"
	"sort"
)

// selection is the result of one resampling step: the chosen children and
// their new weights (before the N/N' factor of the loop). dead marks slots
// filled with weight-0 children when fewer than n weights are positive.
type selection struct {
	idx  []int
	w    []float64
	dead []bool
}

func (s *selection) reset() { s.idx, s.w, s.dead = s.idx[:0], s.w[:0], s.dead[:0] }

func (s *selection) add(i int, w float64, dead bool) {
	s.idx, s.w, s.dead = append(s.idx, i), append(s.w, w), append(s.dead, dead)
}

// fcKind selects how the without-replacement resampler finds c and α.
type fcKind int

const (
	fcExact      fcKind = iota // c* by sort and scan, α = S/(n − |I_det|) = 1/c*
	fcBisect                   // c by bisection (lower end), α = S/(n − |I_det|)
	fcTranscript               // c* exact, α = S/|I_det| (the seed's transcription; mutant)
	fcFindFirst                // LLaMPPL's find_c (mutant)
)

// resampleFC is the without-replacement resampling step of Algorithm 5
// (Fearnhead and Clifford 2003): children with c·ŵ ≥ 1 are kept
// deterministically with their own weight; the n − |I_det| remaining slots
// are filled by the seed's stratified loop over I_stoch,
//
//	U ~ Uniform[0, α];  for i ∈ I_stoch: U ← U − ŵ_i; if U < 0 { select i; U ← U + α },
//
// which selects i with probability ŵ_i/α (each ŵ_i < α, so at most once)
// and gives it the weight W/c. E[new total] = Σ_det w + Σ_stoch (ŵ_i/α)·W/c
// equals Σ w exactly iff α = 1/c; for the exact c*, 1/c* = S/(n − |I_det|)
// with S = Σ_stoch ŵ, which also makes the loop place exactly n − |I_det|
// points in the stochastic mass S. noReset keeps the selected children's
// own weights (a mutant).
func resampleFC(rng *rand.Rand, w []float64, n int, kind fcKind, tol float64, noReset bool, ws *workspace, sel *selection) {
	sel.reset()
	c, total, nDet, keptAll := fcDeterministic(w, n, kind, tol, ws, sel)
	if keptAll {
		return
	}
	det := ws.det
	S := 0.0
	for i, x := range w {
		if det[i] {
			sel.add(i, x, false)
		} else {
			S += x / total
		}
	}
	slots := n - nDet
	var alpha float64
	switch kind {
	case fcTranscript:
		alpha = S / float64(nDet) // +Inf when I_det is empty: nothing is selected
	default:
		if slots <= 0 {
			return
		}
		alpha = S / float64(slots)
	}
	fcStochastic(rng, w, total, total/c, alpha, slots, kind, noReset, det, sel)
}

// fcDeterministic finds c (by kind) and marks in ws.det the children kept
// deterministically (c·ŵ ≥ 1), returning c, the total weight and their
// count; keptAll reports that c = +Inf and keepAll has filled sel.
func fcDeterministic(w []float64, n int, kind fcKind, tol float64, ws *workspace, sel *selection) (c, total float64, nDet int, keptAll bool) {
	var order []int
	det := ws.det[:0]
	for range w {
		det = append(det, false)
	}
	ws.det = det
	for _, x := range w {
		total += x
	}
	switch kind {
	case fcExact, fcTranscript:
		var kstar, m int
		c, kstar, m, order = CStar(w, n, ws.order)
		if m <= n {
			keepAll(w, n, ws, sel, order)
			return c, total, 0, true
		}
		for _, i := range order[kstar:] { // by rank: no rounding in c*·ŵ ≥ 1
			det[i] = true
		}
		nDet = m - kstar
	case fcBisect:
		c, order = CStarBisect(w, n, tol, ws.order)
		if math.IsInf(c, 1) {
			keepAll(w, n, ws, sel, order)
			return c, total, 0, true
		}
	case fcFindFirst:
		c, order = CStarFindFirst(w, n, ws.order)
	}
	ws.order = order
	if kind == fcBisect || kind == fcFindFirst {
		for _, i := range order {
			if c*w[i]/total >= 1 {
				det[i], nDet = true, nDet+1
			}
		}
	}
	return c, total, nDet, false
}

// fcStochastic fills the slots left by the deterministic children with
// the stratified loop over I_stoch (U ~ Uniform[0, α]), each selected
// child given weight strat = W/c (its own with noReset); the exact kind
// repairs a point that rounding put past S or one too many.
func fcStochastic(rng *rand.Rand, w []float64, total, strat, alpha float64, slots int, kind fcKind, noReset bool, det []bool, sel *selection) {
	U := alpha * rng.Float64()
	if math.IsInf(alpha, 1) || math.IsNaN(U) {
		return
	}
	picked := 0
	last := -1
	for i, x := range w {
		if det[i] || x == 0 {
			continue
		}
		last = i
		U -= x / total
		hit := U < 0
		if kind == fcFindFirst {
			hit = U <= 0 // the library's comparison
		}
		if !hit {
			continue
		}
		if kind == fcExact && picked == slots {
			break // rounding: the (slots+1)-th point fell inside S
		}
		picked++
		nw := strat
		if noReset {
			nw = x
		}
		sel.add(i, nw, false)
		U += alpha
	}
	if kind == fcExact && picked < slots && last >= 0 {
		// Rounding: the last point fell past S (Σ ŵ_stoch = α·slots up to
		// a few ulps); it belongs to the last stochastic child.
		if n := len(sel.idx); n == 0 || sel.idx[n-1] != last {
			nw := strat
			if noReset {
				nw = w[last]
			}
			sel.add(last, nw, false)
		}
	}
}

// keepAll keeps every positive child (c* = +Inf) and fills the remaining
// slots up to n with weight-0 children marked dead.
func keepAll(w []float64, n int, ws *workspace, sel *selection, order []int) {
	ws.order = order
	for i, x := range w {
		if x > 0 {
			sel.add(i, x, false)
		}
	}
	for i, x := range w {
		if len(sel.idx) >= n {
			break
		}
		if x == 0 {
			sel.add(i, 0, true)
		}
	}
}

// resampleMultinomial draws n children i.i.d. with probabilities ŵ and
// gives each the weight W/n (Gordon, Salmond and Smith 1993).
func resampleMultinomial(rng *rand.Rand, w []float64, n int, ws *workspace, sel *selection) {
	cum, total := cumulative(w, ws)
	sel.reset()
	for range n {
		sel.add(search(cum, total*rng.Float64(), w), total/float64(n), false)
	}
}

// resampleSystematic places n points u/n, (u+1)/n, ... (u ~ U[0,1), one
// uniform) in the cumulative weights (Kitagawa 1996, J. Comp. Graph.
// Stat. 5(1):1); resampleStratified draws an independent uniform in each
// of the n strata. Each selected child gets the weight W/n.
func resampleSystematic(rng *rand.Rand, w []float64, n int, stratified bool, ws *workspace, sel *selection) {
	cum, total := cumulative(w, ws)
	sel.reset()
	u := rng.Float64()
	j := 0
	for k := range n {
		if stratified {
			u = rng.Float64()
		}
		p := (float64(k) + u) / float64(n) * total
		for j < len(cum)-1 && cum[j] <= p {
			j++
		}
		for w[j] == 0 && j > 0 { // rounding past the end: the last positive child
			j--
		}
		sel.add(j, total/float64(n), false)
	}
}

func cumulative(w []float64, ws *workspace) ([]float64, float64) {
	cum := ws.cum[:0]
	s := 0.0
	for _, x := range w {
		s += x
		cum = append(cum, s)
	}
	ws.cum = cum
	return cum, s
}

// search returns the first i with cum[i] > p, stepping back over zero
// weights when rounding puts p at the very end.
func search(cum []float64, p float64, w []float64) int {
	i := sort.SearchFloat64s(cum, math.Nextafter(p, math.Inf(1)))
	if i >= len(cum) {
		i = len(cum) - 1
	}
	for w[i] == 0 && i > 0 {
		i--
	}
	return i
}
