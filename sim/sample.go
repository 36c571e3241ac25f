package sim

import (
	"math"
	"math/rand/v2"
)

// SampleCDF returns the inverse-CDF sample of p at u ∈ [0, 1): the first x
// with Σ_{y≤x} p(y) > u. It is SampleRow on a float64 slice.
func SampleCDF(u float64, p []float64) int { return sampleRow(u, p) }

// Alias is Walker's alias table for O(1) sampling from a fixed discrete
// distribution (Walker 1977, ACM TOMS 3(3):253; construction by Vose 1991,
// IEEE TSE 17(9):972). Build it once with NewAlias; Sample draws one index
// with two uniforms' worth of randomness (one Uint64).
type Alias struct {
	prob  []float64
	alias []int32
}

// NewAlias builds the alias table of w, which must be non-negative with a
// positive finite sum (it need not be normalised). It panics otherwise.
func NewAlias(w []float64) *Alias {
	n := len(w)
	s := 0.0
	for _, v := range w {
		if v < 0 {
			panic("sim: negative weight")
		}
		s += v
	}
	if !(s > 0) || n == 0 {
		panic("sim: alias table needs a positive sum")
	}
	a := &Alias{prob: make([]float64, n), alias: make([]int32, n)}
	scaled := make([]float64, n)
	small := make([]int32, 0, n)
	large := make([]int32, 0, n)
	for i, v := range w {
		scaled[i] = v * float64(n) / s
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		l := small[len(small)-1]
		small = small[:len(small)-1]
		g := large[len(large)-1]
		a.prob[l] = scaled[l]
		a.alias[l] = g
		scaled[g] = (scaled[g] + scaled[l]) - 1
		if scaled[g] < 1 {
			large = large[:len(large)-1]
			small = append(small, g)
		}
	}
	for _, g := range large {
		a.prob[g] = 1
		a.alias[g] = g
	}
	for _, l := range small { // only reachable through rounding
		a.prob[l] = 1
		a.alias[l] = l
	}
	return a
}

// Sample draws one index. It consumes one Uint64 from rng: the high bits
// pick the column and the low 53 bits the coin.
func (a *Alias) Sample(rng *rand.Rand) int {
	r := rng.Uint64()
	i := int((r >> 32) * uint64(len(a.prob)) >> 32)
	u := float64(r&(1<<32-1)) / (1 << 32)
	if u < a.prob[i] {
		return i
	}
	return int(a.alias[i])
}

// Len returns the number of outcomes.
func (a *Alias) Len() int { return len(a.prob) }

// GammaRand draws Gamma(k, 1) for any k > 0 (Marsaglia and Tsang, ACM
// TOMS 26(3), 2000, with the U^(1/k) boost for k < 1). For k < 1 it
// draws the boost's uniform first; it consumes one normal and one uniform
// per attempt. (The Dirichlet rows of model pairs use gammaLog, which
// follows gonum's variant of the same method draw for draw.)
func GammaRand(rng interface {
	NormFloat64() float64
	Float64() float64
}, k float64) float64 {
	boost := 1.0
	if k < 1 {
		boost = math.Pow(rng.Float64(), 1/k)
		k++
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if math.Log(rng.Float64()) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v * boost
		}
	}
}
