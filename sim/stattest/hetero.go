package stattest

import (
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// MaxExactSpread is the largest number of pooled cells for which
// Hetero.Test computes the spread M exactly (by enumerating the 2^(K-1)
// sign vectors); above it M is bounded by 1.
const MaxExactSpread = 22

// Hetero accumulates independent categorical observations over the same K
// cells, each drawn from its own known law L_s (a control-variate test:
// the variation of the laws between observations is removed instead of
// counted as noise). Under the hypothesis that observation s follows L_s,
//
//	d = O - E,  O_c = #{s: X_s = c},  E_c = Σ_s L_s(c),
//
// is a sum of independent centred vectors with covariance
//
//	Σ = Σ_s (diag(L_s) - L_s L_sᵀ),
//
// so by the Lindeberg central limit theorem X² = dᵀ Σ⁺ d is approximately
// χ²(rank Σ). Observations in a cell of probability zero under their own
// law are impossible under the hypothesis and make X² = +Inf.
//
// The zero value is not usable; call NewHetero.
type Hetero struct {
	k          int
	n          int64
	impossible int64
	random     int64 // observations whose law has more than one possible cell
	obs        []int64
	exp        []float64
	cov        []float64 // k×k, row-major
	nz         []int
	// AddBlocks' compressed moments, folded into exp and cov by flush:
	// the blocks' widths, each cell's block, Σ mass_b and Σ mass_a·mass_b.
	bw  []int
	cb  []int32
	bm  []float64
	bmm []float64
}

// NewHetero returns an empty accumulator over k cells.
func NewHetero(k int) *Hetero {
	if k < 1 {
		panic("stattest: Hetero needs at least one cell")
	}
	return &Hetero{k: k, obs: make([]int64, k), exp: make([]float64, k), cov: make([]float64, k*k)}
}

// K returns the number of cells.
func (h *Hetero) K() int { return h.k }

// N returns the number of observations.
func (h *Hetero) N() int64 { return h.n }

// Add records one observation in cell obs drawn from law (length K,
// summing to 1; it is not validated, as this is a per-observation hot
// path). It panics if obs is out of range.
func (h *Hetero) Add(law []float64, obs int) {
	if len(law) != h.k {
		panic("stattest: Hetero law of the wrong length")
	}
	h.n++
	h.obs[obs]++
	if law[obs] <= 0 {
		h.impossible++
	}
	nz := h.nz[:0]
	for c, p := range law {
		if p > 0 {
			nz = append(nz, c)
			h.exp[c] += p
		}
	}
	h.nz = nz
	if len(nz) > 1 {
		h.random++
	}
	for _, i := range nz {
		pi := law[i]
		row := h.cov[i*h.k:]
		row[i] += pi
		for _, j := range nz {
			row[j] -= pi * law[j]
		}
	}
}

// AddBlocks records one observation in cell obs drawn from a law that is
// constant on consecutive blocks of cells: block b covers the next
// width[b] cells, each of probability mass[b]/width[b] (the masses sum to
// 1). It is Add with that law expanded, at O(blocks²) a call instead of
// O(cells²): the covariance of block-constant laws is kept as Σ mass_b
// and Σ mass_a·mass_b and expanded once, when the test is computed. The
// widths, which must sum to K, are fixed by the first call; a later call
// with a different number of blocks panics (the widths themselves are not
// compared: this is a per-observation hot path).
func (h *Hetero) AddBlocks(width []int, mass []float64, obs int) {
	if h.bw == nil {
		h.setBlocks(width)
	}
	nb := len(h.bw)
	if len(width) != nb || len(mass) != nb {
		panic("stattest: Hetero.AddBlocks with another block layout")
	}
	h.n++
	h.obs[obs]++
	if mass[h.cb[obs]] <= 0 {
		h.impossible++
	}
	possible := 0
	for a, ma := range mass {
		if ma <= 0 {
			continue
		}
		possible += h.bw[a]
		h.bm[a] += ma
		row := h.bmm[a*nb : (a+1)*nb]
		for b, mb := range mass {
			if mb > 0 {
				row[b] += ma * mb
			}
		}
	}
	if possible > 1 {
		h.random++
	}
}

// setBlocks fixes AddBlocks' layout.
func (h *Hetero) setBlocks(width []int) {
	h.bw = append([]int(nil), width...)
	h.cb = make([]int32, 0, h.k)
	for b, w := range width {
		if w < 1 {
			panic("stattest: Hetero.AddBlocks with an empty block")
		}
		for range w {
			h.cb = append(h.cb, int32(b))
		}
	}
	if len(h.cb) != h.k {
		panic("stattest: Hetero.AddBlocks widths do not sum to K")
	}
	h.bm = make([]float64, len(width))
	h.bmm = make([]float64, len(width)*len(width))
}

// flush folds AddBlocks' compressed moments into exp and cov:
// E_c += M_b/w_b and Σ_cd += δ_cd·M_b/w_b − MM_ab/(w_a·w_b) for c in
// block a, d in block b.
func (h *Hetero) flush() {
	if h.bw == nil {
		return
	}
	nb := len(h.bw)
	for c := 0; c < h.k; c++ {
		a := int(h.cb[c])
		e := h.bm[a] / float64(h.bw[a])
		h.exp[c] += e
		row := h.cov[c*h.k : (c+1)*h.k]
		row[c] += e
		for d := 0; d < h.k; d++ {
			b := int(h.cb[d])
			if mm := h.bmm[a*nb+b]; mm != 0 {
				row[d] -= mm / float64(h.bw[a]*h.bw[b])
			}
		}
	}
	clear(h.bm)
	clear(h.bmm)
}

// Merge adds o's observations to h (same K).
func (h *Hetero) Merge(o *Hetero) {
	if o.k != h.k {
		panic("stattest: Hetero merge of different cell counts")
	}
	h.flush()
	o.flush()
	h.n += o.n
	h.impossible += o.impossible
	h.random += o.random
	for i := range h.obs {
		h.obs[i] += o.obs[i]
		h.exp[i] += o.exp[i]
	}
	for i := range h.cov {
		h.cov[i] += o.cov[i]
	}
}

// HeteroResult is the outcome of Hetero.Test.
type HeteroResult struct {
	// Stat is dᵀ Σ⁺ d over the pooled cells (+Inf with impossible
	// observations), DF the rank of Σ and PValue P(χ²(DF) > Stat).
	Stat   float64
	DF     int
	PValue float64
	N      int64
	// Cells is the number of pooled cells, Pooled the input cells merged
	// away or dropped.
	Cells, Pooled int
	// Impossible counts observations of probability zero under their law.
	Impossible int64
	// Deterministic is set when every law had a single possible cell: the
	// test is then "no impossible observation" (see MinDetectableTV).
	Deterministic bool
	// Spread is M = max over sign vectors w ∈ {±1}^cells of wᵀ Σ̄ w,
	// Σ̄ = Σ/N: the largest variance of a ±1 function of one observation,
	// averaged over observations (at most 1). It converts the test's
	// noncentrality into a TV bound; see MinDetectableTV.
	Spread float64
}

// MinDetectableTV returns the smallest TV between the average true law and
// the average hypothesised law, ½ Σ_c |mean_s (π_s(c) - L_s(c))| on the
// pooled cells, that the test detects with probability at least power at
// the given level:
//
//	TV_min = ½·sqrt(λ_req·M/N),  λ_req = RequiredNoncentrality(DF, level, power).
//
// Derivation: the noncentrality is λ = N·δᵀ Σ̄⁺ δ with δ the mean deviation;
// by Cauchy–Schwarz with w = sign(δ), (2·TV)² = (wᵀδ)² ≤ (wᵀ Σ̄ w)(δᵀ Σ̄⁺ δ)
// ≤ M·λ/N. For a fixed law (all L_s equal) M ≤ 1 and the bound is the
// Pearson test's sqrt(λ_req/(4N)); M < 1 is the control variate's gain.
// When every law was deterministic the test rejects exactly when some
// observation is impossible; a step-averaged TV ε is then detected with
// probability at least 1 - Π_s(1-ε_s) ≥ 1 - exp(-N·ε), so TV_min =
// -ln(1-power)/N at any level. It returns +Inf when N is 0, or DF is 0
// with random laws.
func (r HeteroResult) MinDetectableTV(level, power float64) float64 {
	if r.N > 0 && r.Deterministic {
		return -math.Log1p(-power) / float64(r.N)
	}
	if r.N == 0 || r.DF == 0 {
		return math.Inf(1)
	}
	return 0.5 * math.Sqrt(RequiredNoncentrality(r.DF, level, power)*r.Spread/float64(r.N))
}

// Test pools cells with expected count below minExpected (non-positive
// means DefaultMinExpected) into the next cell in order, the last remainder
// into the last kept cell, drops cells never possible, and computes the
// quadratic-form statistic. Eigenvalues of Σ below 1e-9 of the largest
// are treated as zero (directions the hypothesis fixes exactly: the total
// count, and cells that are deterministic given the step).
func (h *Hetero) Test(minExpected float64) HeteroResult {
	if !(minExpected > 0) {
		minExpected = DefaultMinExpected
	}
	h.flush()
	r := HeteroResult{N: h.n, Impossible: h.impossible, Deterministic: h.n > 0 && h.random == 0}
	group, cells := h.pool(minExpected)
	r.Cells, r.Pooled = cells, h.k-cells
	if h.n == 0 || cells < 2 {
		r.PValue = 1
		if r.Impossible > 0 {
			r.Stat, r.PValue = math.Inf(1), 0
		}
		return r
	}
	d, s := h.pooled(group, cells)
	var ok bool
	if r.Stat, r.DF, ok = quadraticForm(s, d); !ok {
		r.Stat, r.PValue = math.NaN(), 1
		return r
	}
	r.Spread = spread(s, float64(h.n))
	switch {
	case r.Impossible > 0:
		r.Stat, r.PValue = math.Inf(1), 0
	case r.DF == 0:
		r.PValue = 1
	default:
		r.PValue = distuv.ChiSquared{K: float64(r.DF)}.Survival(r.Stat)
	}
	return r
}

// pool assigns each cell its pooled cell (-1 for a cell never possible):
// cells in order join an open group until its expected count reaches
// minExpected, and the remainder joins the last group (or stands alone).
// It returns the assignment and the number of pooled cells.
func (h *Hetero) pool(minExpected float64) ([]int, int) {
	group := make([]int, h.k)
	cells, acc, open := 0, 0.0, []int(nil)
	for c := 0; c < h.k; c++ {
		group[c] = -1
		if h.exp[c] == 0 && h.obs[c] == 0 {
			continue
		}
		open = append(open, c)
		acc += h.exp[c]
		if acc >= minExpected {
			for _, o := range open {
				group[o] = cells
			}
			cells, acc, open = cells+1, 0, open[:0]
		}
	}
	if len(open) > 0 { // the remainder joins the last cell, or stands alone
		if cells == 0 {
			cells = 1
		}
		for _, o := range open {
			group[o] = cells - 1
		}
	}
	return group, cells
}

// pooled sums the deviations (observed − expected) and the covariance
// over the cells of each pooled cell.
func (h *Hetero) pooled(group []int, cells int) ([]float64, *mat.SymDense) {
	d := make([]float64, cells)
	dense := make([]float64, cells*cells)
	for c := 0; c < h.k; c++ {
		gc := group[c]
		if gc < 0 {
			continue
		}
		d[gc] += float64(h.obs[c]) - h.exp[c]
		for c2 := 0; c2 < h.k; c2++ {
			if g2 := group[c2]; g2 >= 0 {
				dense[gc*cells+g2] += h.cov[c*h.k+c2]
			}
		}
	}
	return d, mat.NewSymDense(cells, dense)
}

// quadraticForm returns dᵀ S⁺ d and the rank of S, eigenvalues below 1e-9
// of the largest counting as zero; ok is false when S cannot be
// factorised.
func quadraticForm(s *mat.SymDense, d []float64) (stat float64, df int, ok bool) {
	var eig mat.EigenSym
	if !eig.Factorize(s, true) {
		return 0, 0, false
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := 0.0
	for _, v := range vals {
		top = math.Max(top, v)
	}
	for j, v := range vals {
		if v <= 1e-9*top {
			continue
		}
		df++
		u := 0.0
		for i := range d {
			u += vecs.At(i, j) * d[i]
		}
		stat += u * u / v
	}
	return stat, df, true
}

// spread returns max_{w ∈ {±1}^K} wᵀ S w / n, exactly by a Gray-code walk
// over the 2^(K-1) sign vectors (w and -w agree) when K ≤ MaxExactSpread,
// else the bound 1.
func spread(s *mat.SymDense, n float64) float64 {
	k := s.SymmetricDim()
	if k > MaxExactSpread {
		return 1
	}
	w := make([]float64, k)
	for i := range w {
		w[i] = 1
	}
	// sw = S w, q = wᵀ S w, updated in O(K) per flip.
	sw := make([]float64, k)
	q := 0.0
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			sw[i] += s.At(i, j)
		}
		q += sw[i]
	}
	best := q
	for g := uint64(1); g < 1<<(k-1); g++ {
		i := 0
		for (g>>i)&1 == 0 {
			i++
		}
		// flip w_i: q' = q - 4 w_i (S w)_i + 4 S_ii
		q += -4*w[i]*sw[i] + 4*s.At(i, i)
		w[i] = -w[i]
		for j := 0; j < k; j++ {
			sw[j] += 2 * w[i] * s.At(j, i)
		}
		best = math.Max(best, q)
	}
	return math.Min(1, best/n)
}

// TopResiduals returns the k cells with the largest standardised residuals
// (O_c - E_c)/sqrt(E_c), before pooling (group 0).
func (h *Hetero) TopResiduals(k int) []Residual {
	h.flush()
	var rs []Residual
	for c, o := range h.obs {
		if e := h.exp[c]; e > 0 || o > 0 {
			rs = append(rs, residual(0, c, o, e))
		}
	}
	return topResiduals(rs, k)
}
