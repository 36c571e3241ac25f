package stattest

import (
	"math"
	"sort"
)

// Holm returns the Holm–Bonferroni adjusted p-values of p, in the same
// order as p. With p_(1) <= ... <= p_(m) the sorted p-values,
//
//	adj_(i) = min(1, max_{j <= i} (m - j + 1)·p_(j)).
//
// Rejecting the hypotheses with adj <= α controls the family-wise error
// rate at α under any dependence between the tests. The adjusted values
// are monotone in the input order statistics and capped at 1. Ties keep
// their input order. Holm panics if a p-value is NaN or outside [0, 1].
//
// Holm, S. (1979). A simple sequentially rejective multiple test
// procedure. Scandinavian Journal of Statistics 6(2):65–70.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i, v := range p {
		if !(0 <= v && v <= 1) {
			panic("stattest: p-value outside [0, 1]")
		}
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	adj := make([]float64, m)
	var run float64
	for j, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-j)*p[i]))
		adj[i] = run
	}
	return adj
}
