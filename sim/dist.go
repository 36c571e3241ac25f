package sim

import (
	"errors"
	"fmt"
	"math"
)

// SumTol is the largest |sum(p) - 1| that Validate accepts: normalised float32
// rows of V = 128256 entries sum to 1 within about 1e-5, and a row that was
// never normalised misses by far more.
const SumTol = 1e-4

// ErrBadDist is wrapped by every error Validate returns.
var ErrBadDist = errors.New("bad distribution")

// Validate checks that p is a probability vector: non-empty, every entry
// finite and non-negative, and the sum within SumTol of 1. The error names
// the offending index and value and says how to fix it. name is used in the
// message (for example "--p" or "q[2]").
func Validate(name string, p []float64) error {
	if len(p) == 0 {
		return fmt.Errorf("%w: %s is empty; give at least one probability", ErrBadDist, name)
	}
	s := 0.0
	for i, v := range p {
		switch {
		case math.IsNaN(v):
			return fmt.Errorf("%w: %s[%d] is NaN; every probability must be a finite number in [0, 1]", ErrBadDist, name, i)
		case math.IsInf(v, 0):
			return fmt.Errorf("%w: %s[%d] is %v; every probability must be a finite number in [0, 1]", ErrBadDist, name, i, v)
		case v < 0:
			return fmt.Errorf("%w: %s[%d] = %g is negative; probabilities must be >= 0", ErrBadDist, name, i, v)
		}
		s += v
	}
	if math.Abs(s-1) > SumTol {
		return fmt.Errorf("%w: %s sums to %.9g, not 1 (tolerance %g); normalise it", ErrBadDist, name, s, SumTol)
	}
	return nil
}

// ValidatePair validates p and q and checks that they have the same length.
func ValidatePair(p, q []float64) error {
	if err := Validate("p", p); err != nil {
		return err
	}
	if err := Validate("q", q); err != nil {
		return err
	}
	if len(p) != len(q) {
		return fmt.Errorf("%w: vocabulary mismatch: p has %d entries and q has %d; give both over the same vocabulary", ErrBadDist, len(p), len(q))
	}
	return nil
}

// Float64s converts a float32 distribution to float64 into dst (grown as
// needed) and returns it.
func Float64s(dst []float64, p []float32) []float64 {
	dst = grow(dst, len(p))
	for i, v := range p {
		dst[i] = float64(v)
	}
	return dst
}

func grow(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	return dst[:n]
}

func mustSameLen(p, q []float64) {
	if len(p) != len(q) {
		panic("sim: length mismatch")
	}
}

// Alpha returns the acceptance rate of token verification at one position,
//
//	β(p, q) = Σ_x min(p(x), q(x)) = 1 - TV(p, q)
//
// (Leviathan et al. 2023, Theorem 3.5). It panics if len(p) != len(q).
func Alpha(p, q []float64) float64 {
	mustSameLen(p, q)
	s := 0.0
	for i, v := range p {
		s += math.Min(v, q[i])
	}
	return s
}

// TV returns the total variation distance ½ Σ |p(x) - q(x)|.
// It panics if len(p) != len(q).
func TV(p, q []float64) float64 {
	mustSameLen(p, q)
	s := 0.0
	for i, v := range p {
		s += math.Abs(v - q[i])
	}
	return s / 2
}

// KL returns the Kullback–Leibler divergence in nats
//
//	KL(p‖q) = Σ_{x: p(x)>0} p(x) log(p(x)/q(x)),
//
// which is +Inf when q(x) = 0 < p(x) for some x. For the other direction
// call KL(q, p). It panics if len(p) != len(q).
func KL(p, q []float64) float64 {
	mustSameLen(p, q)
	s := 0.0
	for i, v := range p {
		if v == 0 {
			continue
		}
		if q[i] == 0 {
			return math.Inf(1)
		}
		s += v * math.Log(v/q[i])
	}
	return math.Max(s, 0)
}

// JS returns the Jensen–Shannon divergence in nats,
//
//	JS(p, q) = ½ KL(p‖m) + ½ KL(q‖m),  m = (p+q)/2,
//
// which lies in [0, log 2]. It panics if len(p) != len(q).
func JS(p, q []float64) float64 {
	mustSameLen(p, q)
	s := 0.0
	for i, v := range p {
		m := (v + q[i]) / 2
		if v > 0 {
			s += v * math.Log(v/m)
		}
		if q[i] > 0 {
			s += q[i] * math.Log(q[i]/m)
		}
	}
	return math.Max(s/2, 0)
}

// Entropy returns the Shannon entropy -Σ p log p in nats.
func Entropy(p []float64) float64 {
	s := 0.0
	for _, v := range p {
		if v > 0 {
			s -= v * math.Log(v)
		}
	}
	return s
}

// Residual writes norm((p - q)+) into dst (grown as needed) and returns it
// with the mass Σ (p - q)+ = 1 - Alpha(p, q) it was normalised by. When the
// mass is zero (p == q, or p ≤ q everywhere) dst is all zeros and mass is 0:
// token verification never rejects then, so the residual is never sampled.
// It panics if len(p) != len(q).
func Residual(dst, p, q []float64) ([]float64, float64) {
	mustSameLen(p, q)
	dst = grow(dst, len(p))
	mass := 0.0
	for i, v := range p {
		d := v - q[i]
		if d < 0 {
			d = 0
		}
		dst[i] = d
		mass += d
	}
	if mass > 0 {
		for i := range dst {
			dst[i] /= mass
		}
	}
	return dst, mass
}

// Normalize divides p by its sum in place and returns the sum. A zero or
// non-finite sum leaves p unchanged.
func Normalize(p []float64) float64 {
	s := 0.0
	for _, v := range p {
		s += v
	}
	if s > 0 && !math.IsInf(s, 0) {
		for i := range p {
			p[i] /= s
		}
	}
	return s
}

// Argmax returns the index of the largest entry, the lowest index on ties.
func Argmax(p []float64) int {
	best := 0
	for i, v := range p {
		if v > p[best] {
			best = i
		}
	}
	return best
}

// OneHot writes the indicator of index i into dst (length n, grown as
// needed) and returns it.
func OneHot(dst []float64, n, i int) []float64 {
	dst = grow(dst, n)
	clear(dst)
	dst[i] = 1
	return dst
}

// Temperature writes norm(p^(1/t)) into dst (grown as needed) and returns
// it: the distribution of sampling at temperature t from logits log p.
// t must be > 0 (it panics otherwise); t → 0 tends to OneHot(Argmax(p)).
// The computation is done in log space relative to the largest entry, so
// small t does not underflow the mode.
func Temperature(dst, p []float64, t float64) []float64 {
	if !(t > 0) {
		panic("sim: temperature must be > 0")
	}
	dst = grow(dst, len(p))
	m := p[Argmax(p)]
	lm := math.Log(m)
	for i, v := range p {
		if v <= 0 {
			dst[i] = 0
			continue
		}
		dst[i] = math.Exp((math.Log(v) - lm) / t)
	}
	Normalize(dst)
	return dst
}

// Support returns the number of entries of p that are > 0.
func Support(p []float64) int {
	n := 0
	for _, v := range p {
		if v > 0 {
			n++
		}
	}
	return n
}
