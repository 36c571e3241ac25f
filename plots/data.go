package plots

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/plot/plotter"

	"github.com/specsim/specsim/experiments"
)

// num returns column k of r as float64, NaN when absent or not numeric.
func num(r experiments.Row, k string) float64 {
	v, ok := r.Float(k)
	if !ok {
		return math.NaN()
	}
	return v
}

// where returns the rows for which keep holds.
func where(rows []experiments.Row, keep func(experiments.Row) bool) []experiments.Row {
	var out []experiments.Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// eq is a filter: column k formats as v.
func eq(k, v string) func(experiments.Row) bool {
	return func(r experiments.Row) bool { return r.String(k) == v }
}

func and(fs ...func(experiments.Row) bool) func(experiments.Row) bool {
	return func(r experiments.Row) bool {
		for _, f := range fs {
			if !f(r) {
				return false
			}
		}
		return true
	}
}

// distinct returns the sorted distinct numeric values of column k.
func distinct(rows []experiments.Row, k string) []float64 {
	var out []float64
	for _, r := range rows {
		v := num(r, k)
		if !math.IsNaN(v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	sort.Float64s(out)
	return out
}

// distinctS returns the distinct values of column k in order of first
// appearance.
func distinctS(rows []experiments.Row, k string) []string {
	var out []string
	for _, r := range rows {
		if v := r.String(k); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// xy returns the points (x, y) of rows, sorted by x; rows with a NaN or an
// infinity are skipped.
func xy(rows []experiments.Row, x, y string) plotter.XYs {
	var out plotter.XYs
	for _, r := range rows {
		a, b := num(r, x), num(r, y)
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			continue
		}
		out = append(out, plotter.XY{X: a, Y: b})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].X < out[j].X })
	return out
}

// need fails unless rows is non-empty and every row has the columns.
func need(experiment string, rows []experiments.Row, cols ...string) error {
	if len(rows) == 0 {
		return fmt.Errorf("plots: no rows for %s; run 'simulate run %s' first", experiment, experiment)
	}
	for _, c := range cols {
		if _, ok := rows[0].Get(c); !ok {
			return fmt.Errorf("plots: %s rows have no column %q; the table is not the output of experiment %s", experiment, c, experiment)
		}
	}
	return nil
}
