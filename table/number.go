package table

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Agg is how a Number aggregates the rows its filter keeps.
type Agg int

// The aggregates of a Number.
const (
	// First: column Col of the first row, with Digits decimals ("n/a"
	// when no row matches).
	First Agg = iota
	// Count: the number of rows.
	Count
	// MaxAbs: max |Col| over the rows, as a LaTeX number like
	// $2.2\times10^{-16}$ (0 as 0; NA when no row has a number).
	MaxAbs
	// Negative: the number of rows whose Col is below −NegativeTol (so
	// round-off like −2.2e-16 on an exact zero does not count).
	Negative
	// Max: the largest Col over the rows, with Digits decimals ("n/a"
	// when no row matches).
	Max
	// Min: the smallest Col over the rows, with Digits decimals ("n/a"
	// when no row matches).
	Min
	// Mean: the mean of Col over the rows, with Digits decimals ("n/a"
	// without rows).
	Mean
	// SD: the sample standard deviation of Col over the rows (divisor
	// n − 1), with Digits decimals ("n/a" with fewer than two rows).
	SD
	// CoverMean: the number of rows whose interval [ci_lo, ci_hi] holds
	// the mean of Col over the rows (replicates whose 95% interval
	// covers the replicates' mean).
	CoverMean
	// Str: column Col of the first row as text, kept to letters, digits
	// and plain punctuation so that it is safe in LaTeX ("n/a" when no
	// row matches or the column is empty).
	Str
	// Sig: column Col of the first row times Scale (1 when Scale is 0),
	// to Digits significant digits without an exponent (Significant):
	// a time measured in ns quoted in µs, Scale 1e-3 ("n/a" when no row
	// matches).
	Sig
)

// NegativeTol is the tolerance of Negative: a value counts as below zero
// only when it is below −NegativeTol. It is far above float64 round-off
// (≈ 1e-16 on values of order 1) and far below any Monte Carlo interval
// end a report quotes (3 decimals).
const NegativeTol = 1e-9

// Number is one number a paper quotes from an experiment's rows, as
// data: the rows kept by Where (column/value pairs compared as text, as
// Row.String formats them; a value "a|b" accepts either), aggregated by
// Agg over column Col. Macro is its LaTeX macro name (letters only) and
// Doc a few words saying what it is.
type Number struct {
	Macro  string
	Where  []string
	Agg    Agg
	Col    string
	Digits int
	// Scale multiplies the value of a Sig number (a change of unit).
	Scale float64
	Doc   string
}

// keep is the filter of where: every column kv[2i] formats as one of the
// "|"-separated values kv[2i+1].
func keep(kv []string) func(Row) bool {
	return func(r Row) bool {
		for i := 0; i+1 < len(kv); i += 2 {
			if !slices.Contains(strings.Split(kv[i+1], "|"), r.String(kv[i])) {
				return false
			}
		}
		return true
	}
}

// Eval computes the number from rows (the experiment's rows).
func (n Number) Eval(rows []Row) string {
	rows = Where(rows, keep(n.Where))
	switch n.Agg {
	case Count:
		return fmt.Sprint(len(rows))
	case MaxAbs:
		m, ok := 0.0, false
		for _, r := range rows {
			if v, has := r.Float(n.Col); has && !math.IsNaN(v) {
				m, ok = math.Max(m, math.Abs(v)), true
			}
		}
		if !ok {
			return NA
		}
		return texSci(m)
	case Negative:
		c := 0
		for _, r := range rows {
			if v, _ := r.Float(n.Col); v < -NegativeTol {
				c++
			}
		}
		return fmt.Sprint(c)
	case Max, Min:
		m, ok := math.Inf(-1), false
		if n.Agg == Min {
			m = math.Inf(1)
		}
		for _, r := range rows {
			if v, has := r.Float(n.Col); has && !math.IsNaN(v) {
				if n.Agg == Min {
					m = math.Min(m, v)
				} else {
					m = math.Max(m, v)
				}
				ok = true
			}
		}
		return Fixed(m, ok, n.Digits)
	case Mean, SD, CoverMean:
		var xs []float64
		for _, r := range rows {
			if v, has := r.Float(n.Col); has && !math.IsNaN(v) {
				xs = append(xs, v)
			}
		}
		mean := 0.0
		for _, x := range xs {
			mean += x / float64(len(xs))
		}
		switch n.Agg {
		case Mean:
			return Fixed(mean, len(xs) > 0, n.Digits)
		case SD:
			ss := 0.0
			for _, x := range xs {
				ss += (x - mean) * (x - mean)
			}
			return Fixed(math.Sqrt(ss/float64(len(xs)-1)), len(xs) > 1, n.Digits)
		}
		c := 0
		for _, r := range rows {
			if lo, hi := Num(r, "ci_lo"), Num(r, "ci_hi"); lo <= mean && mean <= hi {
				c++
			}
		}
		return fmt.Sprint(c)
	}
	return n.first(rows)
}

// first is a First, Str or Sig number: column Col of the first row, as
// the aggregate formats it (NA without rows).
func (n Number) first(rows []Row) string {
	if len(rows) == 0 {
		return NA
	}
	switch n.Agg {
	case Str:
		return plainText(rows[0].String(n.Col))
	case Sig:
		v, ok := rows[0].Float(n.Col)
		scale := n.Scale
		if scale == 0 {
			scale = 1
		}
		return Significant(v*scale, ok, n.Digits)
	}
	return FixedCol(rows[0], n.Col, n.Digits)
}

// plainText keeps the letters, digits, spaces and the punctuation
// . , ( ) @ + - / : of s (a processor's name, a revision), so that it can
// be written into LaTeX as it is; NA when nothing is left.
func plainText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" .,()@+-/:", r) {
			b.WriteRune(r)
		}
	}
	if t := strings.TrimSpace(b.String()); t != "" {
		return t
	}
	return NA
}

// texSci formats v as a LaTeX number like $2.2\times10^{-16}$ (0 as 0).
func texSci(v float64) string {
	if v == 0 {
		return "0"
	}
	e := math.Floor(math.Log10(math.Abs(v)))
	return fmt.Sprintf(`$%.1f\times10^{%d}$`, v/math.Pow(10, e), int(e))
}
