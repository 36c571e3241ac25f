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
	if err := t.valid(); err != nil {
		return Result{}, err
	}
	obs, rows, cols := t.Obs, t.Rows, t.Cols
	for rows > 2 && cols > 2 && minCellExpected(obs, rows, cols) < minExpected {
		obs, rows, cols = halve(obs, rows, cols)
	}
	r := pearsonIndependence(obs, rows, cols)
	r.Pooled = len(t.Obs) - r.Cells
	return r, nil
}

// TestSparseRows is Test without merging neighbours: the rows some of
// whose cells expect fewer than minExpected counts (R_i·min_j C_j/N <
// minExpected over the columns with a positive margin) are pooled into one
// row, and that row is left out, its counts leaving N, where it too falls
// short; this repeats until every cell left expects minExpected. Which
// rows are pooled or left out depends on the row margins only, and under
// independence the columns are independent of every row label, so the
// test given those margins is as Test's. The rows kept keep their cells
// (no merged neighbours cancel a deviation within them), and N counts the
// observations in the tested cells only, so MinDetectableTV(N, DF, ...)
// bounds the TV of the law of those cells; Result.Pooled counts the
// cells pooled or left out.
func (t Independence) TestSparseRows(minExpected float64) (Result, error) {
	if !(minExpected > 0) {
		minExpected = DefaultMinExpected
	}
	if err := t.valid(); err != nil {
		return Result{}, err
	}
	rows, cols := t.Rows, t.Cols
	alone := make([]bool, rows) // rows kept as they are
	for i := range alone {
		alone[i] = true
	}
	var obs []int64
	dropPool := false
	for { // each pass moves a row out of alone, or leaves the pool out
		obs = t.sparseRows(obs[:0], alone, !dropPool)
		nr := len(obs) / cols
		rs, cs, n := margins(obs, nr, cols)
		if n == 0 {
			break
		}
		minC := n
		for _, c := range cs {
			if c > 0 {
				minC = min(minC, c)
			}
		}
		need := minExpected * float64(n) / float64(minC) // a row's margin at least
		moved, k := false, 0
		for i := range alone {
			if alone[i] {
				if r := rs[k]; r > 0 && float64(r) < need {
					alone[i], moved = false, true
				}
				k++
			}
		}
		if moved {
			continue
		}
		if p := rs[nr-1]; !dropPool && p > 0 && float64(p) < need {
			dropPool = true
			continue
		}
		break
	}
	nr := len(obs) / cols
	r := pearsonIndependence(obs, nr, cols)
	r.Pooled = len(t.Obs) - r.Cells
	return r, nil
}

// sparseRows appends to dst the rows of t kept alone, then, with pool,
// the sum of the others.
func (t Independence) sparseRows(dst []int64, alone []bool, pool bool) []int64 {
	sum := make([]int64, t.Cols)
	for i, a := range alone {
		row := t.Obs[i*t.Cols : (i+1)*t.Cols]
		if a {
			dst = append(dst, row...)
			continue
		}
		for j, o := range row {
			sum[j] += o
		}
	}
	if pool {
		dst = append(dst, sum...)
	}
	return dst
}

// valid reports whether Obs holds Rows×Cols non-negative counts.
func (t Independence) valid() error {
	if t.Rows < 1 || t.Cols < 1 || len(t.Obs) != t.Rows*t.Cols {
		return fmt.Errorf("stattest: independence table of %d counts is not %d×%d", len(t.Obs), t.Rows, t.Cols)
	}
	for _, o := range t.Obs {
		if o < 0 {
			return fmt.Errorf("stattest: negative count %d", o)
		}
	}
	return nil
}

// pearsonIndependence is Pearson's independence statistic of a rows×cols
// table over the rows and columns with a positive margin (Pooled unset).
func pearsonIndependence(obs []int64, rows, cols int) Result {
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
	r.DF = max(liveR-1, 0) * max(liveC-1, 0)
	if n == 0 {
		r.Warnings = append(r.Warnings, ErrNoData)
	}
	r.PValue = pvalue(r.Stat, r.DF, &r.Warnings)
	return r
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
