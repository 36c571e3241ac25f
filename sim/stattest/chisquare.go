package stattest

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/specsim/specsim/internal/diag"
	"gonum.org/v1/gonum/stat/distuv"
)

const (
	// DefaultMinExpected is the minimum expected count per cell used by
	// ChiSquare and Table.Test when they are given a non-positive
	// minExpected. Five is Cochran's classical rule for the adequacy of the
	// chi-squared approximation to Pearson's statistic.
	//
	// Cochran, W. G. (1954). Some methods for strengthening the common χ²
	// tests. Biometrics 10(4):417–451.
	DefaultMinExpected = 5

	// ProbTol is the largest accepted deviation from one of the sum of a
	// row of cell probabilities,
	//
	//	|Σ_i p_i - 1| <= ProbTol.
	//
	// Probability rows are float64 values typically produced by a
	// normalisation such as a softmax over many entries; their sum carries
	// a rounding error of order len(p)·ε ≈ 1e-11 for 1e5 cells (ε = 2^-52).
	// ProbTol leaves two orders of magnitude of headroom over that while
	// still rejecting rows that are wrong rather than merely rounded.
	ProbTol = 1e-9
)

// Sentinel errors used as warnings in Result.Warnings. Warnings wrap them,
// so test for them with errors.Is.
var (
	// ErrNoData reports a test on zero observations.
	ErrNoData = errors.New("stattest: no observations")

	// ErrTooFewCells reports a test left with no degrees of freedom
	// (fewer than two cells after pooling); its p-value is 1.
	ErrTooFewCells = errors.New("stattest: fewer than two cells after pooling")

	// ErrImpossible reports observations in a cell of probability zero;
	// the statistic is then +Inf and the p-value 0.
	ErrImpossible = errors.New("stattest: observation in a cell of probability zero")
)

// Result is the outcome of a Pearson chi-squared goodness-of-fit test.
type Result struct {
	// Stat is Pearson's statistic over the (pooled) cells,
	//
	//	X² = Σ_i (O_i - E_i)²/E_i,  E_i = N·p_i.
	//
	// It is +Inf when some cell with p_i = 0 has O_i > 0.
	Stat float64

	// DF is the number of degrees of freedom, the number of pooled
	// cells minus one (summed over groups for Table.Test).
	DF int

	// PValue is the upper-tail probability P(χ²(DF) > Stat) computed
	// by distuv.ChiSquared.Survival. It is 1 when DF is 0 and 0 when
	// Stat is +Inf.
	PValue float64

	// N is the total number of observations.
	N int64

	// Cells is the number of cells after pooling.
	Cells int

	// Pooled is the number of original cells merged away or dropped by
	// pooling, the number of input cells minus Cells.
	Pooled int

	// Warnings lists statistical caveats about the result. They are
	// never fatal; each wraps one of ErrNoData, ErrTooFewCells or
	// ErrImpossible.
	Warnings diag.Warnings
}

// Pool merges adjacent cells so that each merged cell has a large enough
// expected count. Cells are walked in the order given and accumulated into
// a running cell, which is emitted once its expected count reaches
// minExpected,
//
//	n·Σ_{i in cell} p_i >= minExpected,  n = Σ_i obs_i.
//
// A trailing remainder that never reaches minExpected is merged into the
// last emitted cell of positive probability; if there is none, the
// remainder is emitted on its own. Cells with p_i = 0 and obs_i = 0 are
// dropped. A cell with p_i = 0 and obs_i > 0 is an impossible observation:
// it is never merged, but emitted on its own with probability 0, so that
// ChiSquare reports it as Stat = +Inf and PValue = 0. The order of the
// emitted cells follows the walk.
//
// Pool does not validate its input (see ChiSquare); it panics if obs and
// probs have different lengths. The returned slices are newly allocated.
//
// Merging adjacent cells to meet a minimum expected count is the standard
// remedy for sparse tables; see Cochran (1954) and Agresti, Categorical
// Data Analysis, 3rd ed., Wiley 2013, §1.5.
func Pool(obs []int64, probs []float64, minExpected float64) (pobs []int64, pprobs []float64) {
	if len(obs) != len(probs) {
		panic("stattest: length mismatch between obs and probs")
	}
	var n int64
	for _, o := range obs {
		n += o
	}
	nf := float64(n)

	var (
		accObs  int64
		accProb float64
		accLen  int // number of cells in the running cell
		last    = -1
	)
	for i, p := range probs {
		o := obs[i]
		if p == 0 {
			if o != 0 {
				pobs = append(pobs, o)
				pprobs = append(pprobs, 0)
			}
			continue
		}
		accObs += o
		accProb += p
		accLen++
		if nf*accProb >= minExpected {
			pobs = append(pobs, accObs)
			pprobs = append(pprobs, accProb)
			last = len(pobs) - 1
			accObs, accProb, accLen = 0, 0, 0
		}
	}
	if accLen > 0 {
		if last >= 0 {
			pobs[last] += accObs
			pprobs[last] += accProb
		} else {
			pobs = append(pobs, accObs)
			pprobs = append(pprobs, accProb)
		}
	}
	return pobs, pprobs
}

// ChiSquare performs Pearson's chi-squared goodness-of-fit test of the
// observed counts obs against the cell probabilities probs. The cells are
// first merged with Pool(obs, probs, minExpected), where a non-positive
// minExpected means DefaultMinExpected. Then
//
//	X² = Σ_i (O_i - E_i)²/E_i,  E_i = N·p_i,  N = Σ_i O_i,
//	DF = cells - 1,
//	PValue = P(χ²(DF) > X²).
//
// The p-value is computed exactly from the chi-squared distribution; the
// chi-squared law of X² is itself the large-sample approximation
// (Pearson 1900), which the pooling keeps adequate.
//
// ChiSquare returns an error if a count is negative, a probability is
// negative or not finite, or the probabilities do not sum to 1 within
// ProbTol. It panics if obs and probs have different lengths.
//
// Pearson, K. (1900). On the criterion that a given system of deviations
// from the probable ... Philosophical Magazine 50(302):157–175.
func ChiSquare(obs []int64, probs []float64, minExpected float64) (Result, error) {
	if len(obs) != len(probs) {
		panic("stattest: length mismatch between obs and probs")
	}
	if err := validate(obs, probs); err != nil {
		return Result{}, err
	}
	if !(minExpected > 0) {
		minExpected = DefaultMinExpected
	}
	g := pearson(obs, probs, minExpected)
	r := Result{
		Stat:   g.stat,
		DF:     g.cells - 1,
		N:      g.n,
		Cells:  g.cells,
		Pooled: len(obs) - g.cells,
	}
	if g.n == 0 {
		r.Warnings = append(r.Warnings, ErrNoData)
	}
	if g.impossible > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%w: %d observations", ErrImpossible, g.impossible))
	}
	r.PValue = pvalue(r.Stat, r.DF, &r.Warnings)
	return r, nil
}

// group is the Pearson statistic of one pooled group of cells.
type group struct {
	stat       float64
	cells      int
	n          int64
	impossible int64 // observations in cells of probability zero
}

// pearson pools obs and probs and returns Pearson's statistic.
func pearson(obs []int64, probs []float64, minExpected float64) group {
	pobs, pprobs := Pool(obs, probs, minExpected)
	var g group
	for _, o := range pobs {
		g.n += o
	}
	g.cells = len(pobs)
	nf := float64(g.n)
	for i, o := range pobs {
		e := nf * pprobs[i]
		switch {
		case pprobs[i] == 0:
			// Pool emits probability-zero cells only when o > 0.
			g.impossible += o
			g.stat = math.Inf(1)
		case e > 0:
			d := float64(o) - e
			g.stat += d * d / e
		}
	}
	return g
}

// pvalue returns P(χ²(df) > stat), adding a warning to w if df is 0.
func pvalue(stat float64, df int, w *diag.Warnings) float64 {
	switch {
	case math.IsInf(stat, 1):
		return 0
	case df <= 0:
		*w = append(*w, ErrTooFewCells)
		return 1
	}
	return distuv.ChiSquared{K: float64(df)}.Survival(stat)
}

// validate returns an error describing the first problem with the data.
func validate(obs []int64, probs []float64) error {
	for i, o := range obs {
		if o < 0 {
			return fmt.Errorf("stattest: negative count %d in cell %d", o, i)
		}
	}
	var sum float64
	for i, p := range probs {
		if p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
			return fmt.Errorf("stattest: invalid probability %v in cell %d", p, i)
		}
		sum += p
	}
	if math.Abs(sum-1) > ProbTol {
		return fmt.Errorf("stattest: probabilities sum to %.17g, want 1 within %g", sum, ProbTol)
	}
	return nil
}

// Table accumulates independent groups of counts, each with its own cell
// probabilities, for a single combined chi-squared test. The total count of
// each group is taken as fixed, as for a goodness-of-fit test conditional on
// a context. The zero value is an empty Table ready to use.
type Table struct {
	obs   [][]int64
	probs [][]float64
}

// Add appends a group with counts obs and cell probabilities probs. The
// slices are copied. Add returns an error, leaving the Table unchanged, if
// the data are invalid as described for ChiSquare. It panics if obs and
// probs have different lengths.
func (t *Table) Add(obs []int64, probs []float64) error {
	if len(obs) != len(probs) {
		panic("stattest: length mismatch between obs and probs")
	}
	if err := validate(obs, probs); err != nil {
		return fmt.Errorf("group %d: %w", len(t.obs), err)
	}
	t.obs = append(t.obs, append([]int64(nil), obs...))
	t.probs = append(t.probs, append([]float64(nil), probs...))
	return nil
}

// Len returns the number of groups added to the Table.
func (t *Table) Len() int { return len(t.obs) }

// Test performs the combined Pearson test of all groups. Each group g is
// pooled separately as by ChiSquare (non-positive minExpected means
// DefaultMinExpected), and
//
//	X² = Σ_g X²_g,  DF = Σ_g (cells_g - 1),  PValue = P(χ²(DF) > X²).
//
// Under the null hypothesis the groups' statistics are independent and
// asymptotically χ²(cells_g - 1), so their sum is asymptotically χ²(DF).
// Groups without observations contribute nothing. The returned error is
// always nil; it is kept for symmetry with ChiSquare and future checks.
func (t *Table) Test(minExpected float64) (Result, error) {
	if !(minExpected > 0) {
		minExpected = DefaultMinExpected
	}
	var (
		r      Result
		inputs int
	)
	for i, obs := range t.obs {
		g := pearson(obs, t.probs[i], minExpected)
		inputs += len(obs)
		r.Stat += g.stat
		r.N += g.n
		r.Cells += g.cells
		if g.cells > 0 {
			r.DF += g.cells - 1
		}
		if g.impossible > 0 {
			r.Warnings = append(r.Warnings, fmt.Errorf("%w: %d observations in group %d", ErrImpossible, g.impossible, i))
		}
	}
	r.Pooled = inputs - r.Cells
	if r.N == 0 {
		r.Warnings = append(r.Warnings, ErrNoData)
	}
	r.PValue = pvalue(r.Stat, r.DF, &r.Warnings)
	return r, nil
}

// Residual is one cell of a test with its observed and expected count and
// its standardised residual Z = (Obs - Exp)/sqrt(Exp) (Pearson's; ±Inf
// where Exp is 0 and Obs is not).
type Residual struct {
	Group, Cell int
	Obs         int64
	Exp, Z      float64
}

// topResiduals returns the k entries of rs with the largest |Z|, largest
// first (ties: the earlier cell).
func topResiduals(rs []Residual, k int) []Residual {
	slices.SortStableFunc(rs, func(a, b Residual) int { return cmp.Compare(math.Abs(b.Z), math.Abs(a.Z)) })
	return rs[:min(k, len(rs))]
}

func residual(g, c int, obs int64, exp float64) Residual {
	z := (float64(obs) - exp) / math.Sqrt(exp)
	if exp == 0 {
		z = 0
		if obs > 0 {
			z = math.Inf(1)
		}
	}
	return Residual{Group: g, Cell: c, Obs: obs, Exp: exp, Z: z}
}

// TopResiduals returns the k cells (group, cell) of the table with the
// largest standardised residuals, before pooling: where the observed
// counts depart most from the hypothesis.
func (t *Table) TopResiduals(k int) []Residual {
	var rs []Residual
	for g, obs := range t.obs {
		var n int64
		for _, o := range obs {
			n += o
		}
		for c, o := range obs {
			if e := float64(n) * t.probs[g][c]; e > 0 || o > 0 {
				rs = append(rs, residual(g, c, o, e))
			}
		}
	}
	return topResiduals(rs, k)
}
