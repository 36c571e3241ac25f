package stattest

import "fmt"

// Independence is Pearson's test that the row and column of a two-way
// table of counts are independent: the expected count of cell (i, j) is
// the product of its margins over the total,
//
//	E_ij = R_i·C_j/N,  X² = Σ_ij (O_ij - E_ij)²/E_ij,  DF = (rows' - 1)·(cols' - 1),
//
// over the rows and columns with a positive margin (rows', cols'). Unlike
// a goodness-of-fit test against fixed cell probabilities, a departure of
// either margin from any law leaves it unmoved: it sees only dependence.
// Under independence X² is asymptotically χ²(DF); under a joint law π
// with margins π_i·, π_·j the noncentrality is λ = N·Σ (π_ij -
// π_i·π_·j)²/(π_i·π_·j) ≥ 4N·TV(π, π_i·⊗π_·j)², so MinDetectableTV(N, DF,
// ...) bounds the TV between the joint law and the product of its
// margins (Cramér 1946, §30.5, for the limit; the bound as for
// MinDetectableTV).
//
// Obs holds Rows×Cols counts, row-major. Where the smallest expected count
// is below Test's minExpected, adjacent rows and columns are merged in
// pairs (the grid halves, as coarser bins of the same order) until it is
// not or the grid is 2×2.
type Independence struct {
	Obs        []int64
	Rows, Cols int
}

// Test performs the test. It returns an error if Obs does not hold
// Rows×Cols counts or a count is negative.
func (t Independence) Test(minExpected float64) (Result, error) {
	if !(minExpected > 0) {
		minExpected = DefaultMinExpected
	}
	if t.Rows < 1 || t.Cols < 1 || len(t.Obs) != t.Rows*t.Cols {
		return Result{}, fmt.Errorf("stattest: independence table of %d counts is not %d×%d", len(t.Obs), t.Rows, t.Cols)
	}
	for _, o := range t.Obs {
		if o < 0 {
			return Result{}, fmt.Errorf("stattest: negative count %d", o)
		}
	}
	obs, rows, cols := t.Obs, t.Rows, t.Cols
	for rows > 2 && cols > 2 && minCellExpected(obs, rows, cols) < minExpected {
		obs, rows, cols = halve(obs, rows, cols)
	}
	var r Result
	rs, cs, n := margins(obs, rows, cols)
	r.N = n
	liveR, liveC := 0, 0
	for _, v := range rs {
		if v > 0 {
			liveR++
		}
	}
	for _, v := range cs {
		if v > 0 {
			liveC++
		}
	}
	for i := range rows {
		for j := range cols {
			if rs[i] == 0 || cs[j] == 0 {
				continue
			}
			e := float64(rs[i]) * float64(cs[j]) / float64(n)
			d := float64(obs[i*cols+j]) - e
			r.Stat += d * d / e
		}
	}
	r.Cells = liveR * liveC
	r.Pooled = len(t.Obs) - r.Cells
	r.DF = max(liveR-1, 0) * max(liveC-1, 0)
	if n == 0 {
		r.Warnings = append(r.Warnings, ErrNoData)
	}
	r.PValue = pvalue(r.Stat, r.DF, &r.Warnings)
	return r, nil
}

// TopResiduals returns the k cells with the largest standardised
// residuals against the product of the margins, before any merging
// (Group 0, Cell i·Cols+j).
func (t Independence) TopResiduals(k int) []Residual {
	if len(t.Obs) != t.Rows*t.Cols {
		return nil
	}
	rs, cs, n := margins(t.Obs, t.Rows, t.Cols)
	if n == 0 {
		return nil
	}
	var out []Residual
	for i := range t.Rows {
		for j := range t.Cols {
			e := float64(rs[i]) * float64(cs[j]) / float64(n)
			out = append(out, residual(0, i*t.Cols+j, t.Obs[i*t.Cols+j], e))
		}
	}
	return topResiduals(out, k)
}

// margins returns the row and column sums and the total.
func margins(obs []int64, rows, cols int) (rs, cs []int64, n int64) {
	rs, cs = make([]int64, rows), make([]int64, cols)
	for i := range rows {
		for j := range cols {
			o := obs[i*cols+j]
			rs[i] += o
			cs[j] += o
			n += o
		}
	}
	return rs, cs, n
}

// minCellExpected is the smallest expected count R_i·C_j/N over the
// rows and columns with a positive margin (+Inf for an empty table).
func minCellExpected(obs []int64, rows, cols int) float64 {
	rs, cs, n := margins(obs, rows, cols)
	lo := func(xs []int64) int64 {
		m := int64(-1)
		for _, x := range xs {
			if x > 0 && (m < 0 || x < m) {
				m = x
			}
		}
		return m
	}
	r, c := lo(rs), lo(cs)
	if n == 0 || r < 0 || c < 0 {
		return 1e308
	}
	return float64(r) * float64(c) / float64(n)
}

// halve merges rows 2a, 2a+1 and columns 2b, 2b+1 (an odd last row or
// column stays alone).
func halve(obs []int64, rows, cols int) ([]int64, int, int) {
	nr, nc := (rows+1)/2, (cols+1)/2
	out := make([]int64, nr*nc)
	for i := range rows {
		for j := range cols {
			out[(i/2)*nc+j/2] += obs[i*cols+j]
		}
	}
	return out, nr, nc
}
