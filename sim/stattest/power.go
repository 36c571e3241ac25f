package stattest

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

const (
	// MixtureTol bounds the Poisson weight left out of the mixture
	// summed by NoncentralChiSquaredSurvival. Each left-out term is a
	// weight times a survival probability at most 1, so MixtureTol is
	// also a bound on the absolute truncation error; it sits a few ulps
	// above 1 so that it is reachable in float64.
	MixtureTol = 1e-15

	// NoncentralityTol is the relative width at which the bisection of
	// RequiredNoncentrality stops,
	//
	//	hi - lo <= NoncentralityTol·hi.
	//
	// The power Q_k(c; λ) = P(χ²(k, λ) > c) has slope
	//
	//	∂Q_k/∂λ = ½·(Q_{k+2}(c; λ) - Q_k(c; λ)) ∈ [0, ½],
	//
	// so the power at the returned λ exceeds the target by at most
	// ½·NoncentralityTol·λ, far inside the 1e-6 accuracy a power
	// calculation needs for any λ below 1e4.
	NoncentralityTol = 1e-10

	// maxNoncentrality caps the bracketing of RequiredNoncentrality; it
	// is only reached for powers within ~1e-15 of 1.
	maxNoncentrality = 1 << 30
)

// NoncentralChiSquaredSurvival returns P(X > x) for X following the
// noncentral chi-squared distribution with k degrees of freedom and
// noncentrality λ = lambda, the law of Σ_{i=1}^k (Z_i + δ_i)² with Z_i
// independent standard normals and Σ δ_i² = λ. It is computed as the
// Poisson mixture of central survivals
//
//	P(X > x) = Σ_{j>=0} Pois(j; λ/2)·P(χ²(k+2j) > x),
//
// summed from the Poisson mode ⌊λ/2⌋ outwards, extending on the side with
// the larger remaining weight, until the Poisson weight outside the summed
// range is below MixtureTol. The remaining weights are Poisson tails
// computed with regularized incomplete gamma functions, so the absolute
// error is below MixtureTol plus the accumulated error of the
// distuv.ChiSquared.Survival terms (below 1e-12 against the exact k = 1
// identity for λ up to 1e5). The cost grows like √λ terms.
//
// For lambda == 0 it equals distuv.ChiSquared{K: k}.Survival(x). It returns
// 1 for x <= 0 and NaN for NaN x. It panics if k < 1 or lambda is negative
// or NaN.
//
// Johnson, N. L., Kotz, S. and Balakrishnan, N. (1995). Continuous
// Univariate Distributions, Vol. 2, 2nd ed., Wiley, ch. 29, eq. (29.2).
func NoncentralChiSquaredSurvival(x float64, k int, lambda float64) float64 {
	if k < 1 {
		panic("stattest: degrees of freedom less than 1")
	}
	if !(lambda >= 0) {
		panic("stattest: negative or NaN noncentrality")
	}
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x <= 0:
		return 1
	case math.IsInf(x, 1):
		return 0
	case lambda == 0:
		return distuv.ChiSquared{K: float64(k)}.Survival(x)
	}
	mu := lambda / 2
	pois := distuv.Poisson{Lambda: mu}
	term := func(j float64) float64 {
		return pois.Prob(j) * distuv.ChiSquared{K: float64(k) + 2*j}.Survival(x)
	}
	// below is P(J < lo); above is P(J > hi) = GammaIncReg(hi+1, μ), which
	// unlike pois.Survival does not suffer cancellation in 1 - CDF.
	lo := math.Floor(mu)
	hi := lo
	sum := term(lo)
	below := pois.CDF(lo - 1)
	above := mathext.GammaIncReg(hi+1, mu)
	for below+above >= MixtureTol {
		if below >= above {
			lo--
			sum += term(lo)
			below = pois.CDF(lo - 1)
		} else {
			hi++
			sum += term(hi)
			above = mathext.GammaIncReg(hi+1, mu)
		}
	}
	return math.Min(sum, 1)
}

// RequiredNoncentrality returns the smallest noncentrality λ at which the
// level-α chi-squared test with df degrees of freedom has power at least
// power, that is the root of
//
//	P(χ²(df, λ) > c) = power,  c = F⁻¹_{χ²(df)}(1 - α),
//
// with α = level and c from distuv.ChiSquared.Quantile. The power is
// increasing in λ (it is P(X > c) for a family stochastically increasing in
// λ), so λ is bracketed by doubling and then bisected until the relative
// bracket width is NoncentralityTol; the upper end of the bracket is
// returned, so the power at the result is at least the target. If power
// <= level, no noncentrality is needed and 0 is returned.
//
// It panics if df < 1, or level or power is outside (0, 1).
//
// Cohen, J. (1988). Statistical Power Analysis for the Behavioral
// Sciences, 2nd ed., Erlbaum, ch. 7 (power of chi-squared tests).
func RequiredNoncentrality(df int, level, power float64) float64 {
	if df < 1 {
		panic("stattest: degrees of freedom less than 1")
	}
	mustOpenUnit("level", level)
	mustOpenUnit("power", power)
	if power <= level {
		return 0
	}
	key := ncKey{df, level, power}
	ncMemo.Lock()
	lambda, ok := ncMemo.m[key]
	ncMemo.Unlock()
	if !ok {
		lambda = requiredNoncentrality(df, level, power)
		ncMemo.Lock()
		if len(ncMemo.m) >= ncMemoSize {
			clear(ncMemo.m)
		}
		ncMemo.m[key] = lambda
		ncMemo.Unlock()
	}
	return lambda
}

// ncMemo memoises RequiredNoncentrality, a root search over the
// noncentral chi-squared survival (milliseconds): a check asks it for
// every test, and tests share their degrees of freedom and level share
// (a per-row-kind report asks again for each kind). It holds at most
// ncMemoSize entries (cleared when full).
var ncMemo = struct {
	sync.Mutex
	m map[ncKey]float64
}{m: map[ncKey]float64{}}

const ncMemoSize = 1 << 14

type ncKey struct {
	df           int
	level, power float64
}

// requiredNoncentrality computes RequiredNoncentrality.
func requiredNoncentrality(df int, level, power float64) float64 {
	c := distuv.ChiSquared{K: float64(df)}.Quantile(1 - level)
	pow := func(lambda float64) float64 { return NoncentralChiSquaredSurvival(c, df, lambda) }
	lo, hi := 0.0, 1.0
	for pow(hi) < power {
		lo, hi = hi, 2*hi
		if hi > maxNoncentrality {
			return math.Inf(1)
		}
	}
	for hi-lo > NoncentralityTol*hi {
		mid := lo + (hi-lo)/2
		if pow(mid) >= power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// MinDetectableTV returns the smallest total-variation distance between
// the true and the hypothesised cell probabilities that the chi-squared
// test on n observations with df degrees of freedom is guaranteed to
// detect with probability at least power at the given level, in the
// large-sample (noncentral chi-squared) approximation:
//
//	TV_min = sqrt(λ_req / (4n)),  λ_req = RequiredNoncentrality(df, level, power).
//
// Derivation. Under a true law π the Pearson statistic is approximately
// noncentral chi-squared with
//
//	λ = n·Σ_i (π_i - p_i)²/p_i.
//
// By Cauchy–Schwarz with Σ_i p_i = 1,
//
//	(Σ_i |π_i - p_i|)² = (Σ_i (|π_i - p_i|/√p_i)·√p_i)² <= Σ_i (π_i - p_i)²/p_i,
//
// so λ >= n·(2·TV)² = 4n·TV² with TV = ½·Σ_i |π_i - p_i|. The power
// increases with λ, so TV >= sqrt(λ_req/(4n)) implies λ >= λ_req and the
// power is attained. Equality holds for π_i = p_i·(1 ± 2·TV) with signs
// balanced so that Σ_i π_i = 1. TV is measured on the cells actually
// tested, that is after pooling. A result above 1 means no alternative is
// guaranteed to be detected.
//
// MinDetectableTV returns +Inf for n == 0. It panics if n < 0 and under
// the conditions of RequiredNoncentrality.
func MinDetectableTV(n int64, df int, level, power float64) float64 {
	if n < 0 {
		panic("stattest: negative number of observations")
	}
	lambda := RequiredNoncentrality(df, level, power)
	if n == 0 {
		return math.Inf(1)
	}
	return math.Sqrt(lambda / (4 * float64(n)))
}
