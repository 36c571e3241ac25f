package stattest

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary describes a Monte Carlo estimate of a mean with a normal
// confidence interval.
type Summary struct {
	N          int64   // number of samples
	Mean       float64 // sample mean
	StdDev     float64 // sample standard deviation (n-1 denominator)
	Lo, Hi     float64 // confidence interval for the mean
	Confidence float64 // confidence level of [Lo, Hi], e.g. 0.95
}

// Summarize returns the mean, standard deviation and normal confidence
// interval of n samples given their running sums sum = Σ x_i and
// sumSq = Σ x_i²:
//
//	Mean   = sum/n,
//	StdDev = sqrt((sumSq - n·Mean²)/(n - 1)),
//	Lo, Hi = Mean ∓ z·StdDev/√n,  z = Φ⁻¹((1 + confidence)/2).
//
// The interval is the large-sample (central limit theorem) interval. The
// variance formula loses precision when the standard deviation is tiny
// compared with the mean (the difference cancels); use Moments, which
// accumulates with Welford's update, in that case. A negative variance
// from rounding is clamped to 0. For n == 0 the Mean and StdDev are NaN,
// for n == 1 the StdDev is NaN, and in both cases the interval is
// (-Inf, +Inf). Summarize panics if n < 0 or confidence is outside (0, 1).
func Summarize(sum, sumSq float64, n int64, confidence float64) Summary {
	if n < 0 {
		panic("stattest: negative number of samples")
	}
	z := zQuantile(confidence)
	s := Summary{N: n, Confidence: confidence, Lo: math.Inf(-1), Hi: math.Inf(1)}
	if n == 0 {
		s.Mean, s.StdDev = math.NaN(), math.NaN()
		return s
	}
	nf := float64(n)
	s.Mean = sum / nf
	if n == 1 {
		s.StdDev = math.NaN()
		return s
	}
	v := (sumSq - nf*s.Mean*s.Mean) / (nf - 1)
	s.StdDev = math.Sqrt(math.Max(v, 0))
	half := z * s.StdDev / math.Sqrt(nf)
	s.Lo, s.Hi = s.Mean-half, s.Mean+half
	return s
}

// SmallSample returns the mean, standard deviation and Student-t
// confidence interval of the few samples xs (replicates of a sweep cell,
// say), where the normal interval of Summarize would be too narrow:
//
//	Lo, Hi = Mean ∓ t_{n-1}((1 + confidence)/2)·StdDev/√n,
//
// with t_{n-1} the quantile of Student's t with n-1 degrees of freedom
// (Student 1908, Biometrika 6(1):1–25). Mean and StdDev are gonum's
// stat.MeanStdDev (corrected two-pass). For n == 0 the Mean and StdDev
// are NaN, for n == 1 the StdDev is NaN, and in both cases the interval
// is (-Inf, +Inf). SmallSample panics if confidence is outside (0, 1).
func SmallSample(xs []float64, confidence float64) Summary {
	mustOpenUnit("confidence", confidence)
	n := len(xs)
	s := Summary{N: int64(n), Confidence: confidence, Lo: math.Inf(-1), Hi: math.Inf(1), Mean: math.NaN(), StdDev: math.NaN()}
	if n == 0 {
		return s
	}
	if n == 1 {
		s.Mean = xs[0]
		return s
	}
	s.Mean, s.StdDev = stat.MeanStdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile((1 + confidence) / 2)
	half := t * s.StdDev / math.Sqrt(float64(n))
	s.Lo, s.Hi = s.Mean-half, s.Mean+half
	return s
}

// Sums accumulates the running sums that Summarize takes: the count N,
// Sum = Σ x_i and SumSq = Σ x_i². Unlike Moments, two Sums merge by
// adding their fields, so the chunk accumulators of sim.MonteCarlo, merged
// in chunk order, give the same bits for any worker count. The zero value
// is empty and ready to use.
type Sums struct {
	N          int64
	Sum, SumSq float64
}

// Add adds the sample x.
func (s *Sums) Add(x float64) {
	s.N++
	s.Sum += x
	s.SumSq += x * x
}

// Merge adds the samples of o.
func (s *Sums) Merge(o Sums) {
	s.N += o.N
	s.Sum += o.Sum
	s.SumSq += o.SumSq
}

// Summary returns Summarize(s.Sum, s.SumSq, s.N, confidence).
func (s Sums) Summary(confidence float64) Summary {
	return Summarize(s.Sum, s.SumSq, s.N, confidence)
}

// Moments accumulates the mean and variance of a stream of samples with
// Welford's numerically stable update. The zero value is empty and ready
// to use.
//
// Welford, B. P. (1962). Note on a method for calculating corrected sums
// of squares and products. Technometrics 4(3):419–420.
type Moments struct {
	n    int64
	mean float64
	m2   float64 // Σ (x_i - mean)²
}

// Add adds the sample x.
func (m *Moments) Add(x float64) {
	m.n++
	d := x - m.mean
	m.mean += d / float64(m.n)
	m.m2 += d * (x - m.mean)
}

// Summary returns the Summary of the samples added so far, as Summarize
// would for exact running sums. It panics if confidence is outside (0, 1).
func (m *Moments) Summary(confidence float64) Summary {
	if m.n < 2 {
		nf := float64(m.n)
		return Summarize(m.mean*nf, m.mean*m.mean*nf, m.n, confidence)
	}
	z := zQuantile(confidence)
	sd := math.Sqrt(m.m2 / float64(m.n-1))
	half := z * sd / math.Sqrt(float64(m.n))
	return Summary{N: m.n, Mean: m.mean, StdDev: sd, Lo: m.mean - half, Hi: m.mean + half, Confidence: confidence}
}

// Wilson returns the Wilson score confidence interval for a binomial
// proportion with k successes in n trials,
//
//	(p̂ + z²/(2n) ∓ z·sqrt(p̂(1-p̂)/n + z²/(4n²))) / (1 + z²/n),
//
// with p̂ = k/n and z = Φ⁻¹((1 + confidence)/2). Unlike the Wald
// interval it has good coverage for p̂ near 0 or 1 and never leaves
// [0, 1]. For n == 0 it returns [0, 1]. It panics if k < 0, k > n or
// confidence is outside (0, 1).
//
// Wilson, E. B. (1927). Probable inference, the law of succession, and
// statistical inference. JASA 22(158):209–212; see also Brown, Cai and
// DasGupta (2001), Statistical Science 16(2):101–133.
func Wilson(k, n int64, confidence float64) (lo, hi float64) {
	if k < 0 || k > n {
		panic("stattest: successes outside [0, n]")
	}
	z := zQuantile(confidence)
	if n == 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	lo, hi = math.Max(0, center-half), math.Min(1, center+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}

// BinomialAcceptance returns the two-sided acceptance range [lo, hi] for
// the number of rejections among n independent tests, each rejecting with
// probability level under the null hypothesis. With R ~ Binomial(n, level),
//
//	lo = min{r : P(R <= r) > δ/2},  hi = min{r : P(R > r) <= δ/2},
//
// with δ = delta, so that P(R < lo) <= δ/2, P(R > hi) <= δ/2 and
//
//	P(lo <= R <= hi) >= 1 - δ.
//
// Both tails are computed from distuv.Binomial.CDF, the upper one as the
// lower tail of n - R ~ Binomial(n, 1 - level) to avoid cancellation, and
// the quantiles are found by bisection over the integers. It is meant for
// checking the false-alarm rate of a test: an observed rejection count
// outside [lo, hi] refutes the claimed level at significance δ.
//
// For n == 0 it returns (0, 0). It panics if n < 0, or level or delta is
// outside (0, 1).
func BinomialAcceptance(n int, level, delta float64) (lo, hi int) {
	if n < 0 {
		panic("stattest: negative number of tests")
	}
	mustOpenUnit("level", level)
	mustOpenUnit("delta", delta)
	if n == 0 {
		return 0, 0
	}
	nf := float64(n)
	rej := distuv.Binomial{N: nf, P: level}
	acc := distuv.Binomial{N: nf, P: 1 - level}
	// P(R <= r) is increasing in r.
	lo = minInt(0, n, func(r int) bool { return rej.CDF(float64(r)) > delta/2 })
	// P(R > r) = P(n-R < n-r) = P(n-R <= n-r-1) is decreasing in r.
	hi = minInt(0, n, func(r int) bool { return acc.CDF(float64(n-r-1)) <= delta/2 })
	return lo, hi
}

// minInt returns the smallest r in [a, b] for which the monotone predicate
// ok holds, assuming ok(b) holds.
func minInt(a, b int, ok func(int) bool) int {
	for a < b {
		m := a + (b-a)/2
		if ok(m) {
			b = m
		} else {
			a = m + 1
		}
	}
	return a
}

// mustOpenUnit panics with "stattest: name outside (0, 1)" unless
// 0 < x < 1 (a level, power or confidence out of range is a programmer
// error).
func mustOpenUnit(name string, x float64) {
	if !(0 < x && x < 1) {
		panic("stattest: " + name + " outside (0, 1)")
	}
}

// zQuantile returns the two-sided standard normal quantile
// Φ⁻¹((1 + confidence)/2), panicking if confidence is outside (0, 1).
func zQuantile(confidence float64) float64 {
	mustOpenUnit("confidence", confidence)
	return distuv.UnitNormal.Quantile((1 + confidence) / 2)
}
