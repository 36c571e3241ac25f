package smc

import (
	"math"
	"slices"
)

// CStar returns the threshold of Fearnhead and Clifford (2003, JRSS-B
// 65(4):887, §3) for resampling n of the weights w (non-negative, not
// necessarily normalised), computed exactly by sort and scan:
//
//	c* = inf{c > 0 : f(c) > n},  f(c) = Σ_i min(1, c·ŵ_i),  ŵ = w/Σw.
//
// f is continuous and non-decreasing, with f(0) = 0 and f(∞) = m, the
// number of positive weights, and strictly increasing wherever f < m.
// Hence when m > n the set {f > n} is the open ray (c₀, ∞) with f(c₀) = n,
// and c* = c₀ is the root of f(c) = n: the "> n" definition of the seed
// and the "= n" equation of Fearnhead and Clifford agree. When m ≤ n the
// set is empty and c* = +Inf (every positive weight is kept); the "= n"
// equation then has no root (m < n) or a whole ray of roots (m = n), so
// "> n" is the definition that is right in every case.
//
// With the positive weights sorted ascending, ŵ_(1) ≤ … ≤ ŵ_(m), prefix
// sums B_k = Σ_{j≤k} ŵ_(j) and
//
//	g(k) = B_k/ŵ_(k) + m − k   (non-increasing in k, g(1) = m > n),
//
// the split puts the k* smallest weights in the stochastic set, with
// k* = max{k : g(k) > n}, and
//
//	c* = (n − m + k*)/B_{k*}:
//
// c*·ŵ_(k*) < 1 ⟺ g(k*) > n and c*·ŵ_(k*+1) ≥ 1 ⟺ g(k*+1) ≤ n, so the
// split is consistent and f(c*) = (m − k*) + c*·B_{k*} = n. Tied weights
// are never split. CStar returns c*, k* and the number of positive
// weights m; order receives the indices of the positive weights sorted
// ascending (reused). w must have a positive sum.
func CStar(w []float64, n int, order []int) (c float64, kstar, m int, sorted []int) {
	order, total := positiveOrder(w, order)
	m = len(order)
	if m <= n {
		return math.Inf(1), 0, m, order
	}
	B := 0.0
	kstar = 0
	for k := 1; k <= m; k++ {
		wk := w[order[k-1]] / total
		Bk := B + wk
		if Bk/wk+float64(m-k) <= float64(n) {
			break
		}
		B, kstar = Bk, k
	}
	return float64(n-m+kstar) / B, kstar, m, order
}

// CStarFindFirst is the find_c rule of probcomp/LLaMPPL and genlm/llamppl
// (llamppl/inference/smc_steer.py), kept as a mutant: it scans the sorted
// weights ascending and returns (n − A)/B at the FIRST position i with
//
//	B_i/ŵ_(i) + A − n ≤ 1e-12,  A = m − i,
//
// that is g(i) ≤ n: the first position whose weight would already be
// deterministic, one past the consistent split k* of CStar. It returns
// n when no position qualifies, as the library does. Its c satisfies
// f(c) = n + 1 − c·ŵ_(k*+1) ≤ n, with equality only when c·ŵ_(k*+1) = 1.
func CStarFindFirst(w []float64, n int, order []int) (float64, []int) {
	order, total := positiveOrder(w, order)
	m := len(order)
	B := 0.0
	for i := 1; i <= m; i++ {
		chi := w[order[i-1]] / total
		B += chi
		if B/chi+float64(m-i)-float64(n) <= 1e-12 {
			return float64(n-(m-i)) / B, order
		}
	}
	return float64(n), order
}

// CStarBisect solves f(c) = n by bisection, as implementations without the
// sort-and-scan solution do: starting from [n, 1/ŵ_min] (f(n) ≤ n < m =
// f(1/ŵ_min) when m > n), it halves the bracket until hi − lo ≤ tol·hi and
// returns lo, the end with f(lo) ≤ n, so the deterministic set never
// exceeds n. The result is below c* by at most a relative tol; the
// resampler that uses it therefore gives selected particles the weight
// W/c > W/c*, an upward bias of the evidence estimate of up to about tol
// per resampling step. It returns +Inf when m ≤ n. It stops too when the
// bracket is as narrow as float64 allows (tol below about 2^-52), so it
// always ends.
func CStarBisect(w []float64, n int, tol float64, order []int) (float64, []int) {
	order, total := positiveOrder(w, order)
	m := len(order)
	if m <= n {
		return math.Inf(1), order
	}
	lo, hi := float64(n), total/w[order[0]]
	// each step halves the bracket, so 2100 steps exhaust float64's range;
	// a midpoint equal to an end means the bracket cannot shrink further
	for it := 0; hi-lo > tol*hi && it < 2100; it++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if F(w, total, mid) > float64(n) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, order
}

// F returns f(c) = Σ_i min(1, c·w_i/total).
func F(w []float64, total, c float64) float64 {
	s := 0.0
	for _, x := range w {
		s += math.Min(1, c*x/total)
	}
	return s
}

// positiveOrder returns the indices of the positive entries of w sorted
// by weight ascending (ties by index), and Σw.
func positiveOrder(w []float64, order []int) ([]int, float64) {
	order = order[:0]
	total := 0.0
	for i, x := range w {
		total += x
		if x > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case w[a] < w[b]:
			return -1
		case w[a] > w[b]:
			return 1
		}
		return a - b
	})
	return order, total
}
