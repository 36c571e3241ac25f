package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// The sampling paths of SpecInfer and RRS without replacement, without
// writing any row. Both residual recursions keep the form
//
//	r_i(t) = (p(t) - a_i·q(t))+ / Z_i
//
// on the tokens not yet rejected: if r = (p - a q)+/Z then
// (r - q/S)+ = (p - (a + Z/S) q)+/Z where p > a q, and 0 elsewhere (where
// p - (a + Z/S) q ≤ 0 as well), so a rejection only moves the scalar
// a ← a + Z/S (S = 1 with replacement; S = the draft mass not yet
// rejected without replacement, where s = q restricted and renormalised)
// and Z is one pass of sim.ResidualMass: Σ_t (p - a q)+ = a·Σ_t (p/a - q)+.
// Without replacement a rejected token leaves s, so its weight stays at the
// value it had when it was rejected. The laws are those of the
// row-writing recursions in SpecInfer.stepLaw and RRSWithout.run (the
// exact laws, which the tests compare the samplers with).

// specInferStep is SpecInfer.step in scalar form.
func specInferStep(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	nd := &t.Nodes[n]
	a, z := 0.0, 1.0
	for _, c := range nd.Draws {
		x := t.Nodes[c].Token
		px, qx := nd.P.At(x), nd.Q.At(x)
		if rng.Float64() < math.Max(px-a*qx, 0)/z/qx {
			return c, 0
		}
		na := a + z
		if nz := na * sim.ResidualMass(1/na, nd.P, nd.Q); nz > 0 {
			a, z = na, nz
		} // an empty residual keeps r, as residualStep does
	}
	return -1, sampleScaled(rng.Float64(), a, z, nd.P, nd.Q)
}

// sampleScaled samples norm((p - a q)+) whose mass is z (p itself at a =
// 0).
func sampleScaled(u, a, z float64, p, q sim.Row) int {
	if a == 0 {
		return sim.SampleRow(u, p)
	}
	if y := sim.SampleResidual(u, 1/a, p, q, z/a); y >= 0 {
		return y
	}
	return sim.SampleRow(u, p)
}

// rrsWithoutStep is RRSWithout's sampling path in scalar form.
func rrsWithoutStep(rng *rand.Rand, t *sim.Tree, n int) (int, int) {
	nd := &t.Nodes[n]
	var rej [64]int        // rejected tokens
	var frozen [64]float64 // their weights (in the scale of Z)
	nr := 0
	a, z, s := 0.0, 1.0, 1.0 // r = W/z; s = q·1[not rejected]/s
	full := 0.0              // Σ_t (p - a q)+ over all tokens at the current a
	weight := func(x int) float64 { return math.Max(nd.P.At(x)-a*nd.Q.At(x), 0) }
	for _, c := range nd.Draws {
		x := t.Nodes[c].Token
		qx := nd.Q.At(x)
		if rng.Float64() < (weight(x)/z)/(qx/s) {
			return c, 0
		}
		na := a + z/s
		full0 := na * sim.ResidualMass(1/na, nd.P, nd.Q)
		nz := full0
		for k := range nr {
			y := rej[k]
			nz += frozen[k] - math.Max(nd.P.At(y)-na*nd.Q.At(y), 0)
		}
		if nz > 0 {
			a, z, full = na, nz, full0
		}
		if nr < len(rej) {
			rej[nr], frozen[nr] = x, weight(x)
			nr++
		}
		if s -= qx; !(s > 0) {
			s = 0
		}
	}
	// emit from W/z: the rejected tokens' frozen weights, then (p - a q)+
	// over the others.
	target := rng.Float64() * z
	for k := range nr {
		if target < frozen[k] {
			return -1, rej[k]
		}
		target -= frozen[k]
	}
	if a > 0 {
		// (p - a q)+ restricted to the tokens not rejected: sample the
		// unrestricted residual and retry on a rejected token (rejection
		// sampling, so the law is the restriction); the explicit loop
		// below is the fallback when the rejected tokens hold most of it.
		for range 16 {
			y := sim.SampleResidual(rng.Float64(), 1/a, nd.P, nd.Q, full/a)
			if y >= 0 && !isIn(rej[:nr], y) {
				return -1, y
			}
		}
		target = rng.Float64() * (z - sumOf(frozen[:nr]))
	}
	last := -1
	for y := 0; y < t.V; y++ {
		w := nd.P.At(y) - a*nd.Q.At(y)
		if !(w > 0) || isIn(rej[:nr], y) {
			continue
		}
		last = y
		if target < w {
			return -1, y
		}
		target -= w
	}
	if last < 0 { // rounding left nothing outside the rejected tokens
		return -1, sim.SampleRow(rng.Float64(), nd.P)
	}
	return -1, last
}

// sumOf returns Σ w, added in index order.
func sumOf(w []float64) float64 {
	s := 0.0
	for _, v := range w {
		s += v
	}
	return s
}

func isIn(s []int, y int) bool {
	for _, v := range s {
		if v == y {
			return true
		}
	}
	return false
}

// massBlock is the block length of sampleMassBlocks' checkpoints.
const massBlock = 256

// sampleMassBlocks is sampleMass in about one pass instead of two: the
// summing pass keeps four running sums per block of massBlock weights (so
// the additions do not wait on each other) and records the total at each
// block's end; the scan starts at the first block whose total passes
// u·Σw. The sums differ from sampleMass's index order by rounding only, so
// the token is sampleMass's but where u·Σw lies within rounding of a
// cumulative sum (TestSampleMassBlocks). w must hold no NaN.
func sampleMassBlocks(u float64, w []float64) int {
	var ends [(1 << 17) / massBlock]float64 // V up to 131,072; sampleMass beyond
	n := len(w)
	nb := (n + massBlock - 1) / massBlock
	if nb > len(ends) {
		return sampleMass(u, w)
	}
	s := 0.0
	for k := range nb {
		blk := w[k*massBlock : min(n, (k+1)*massBlock)]
		var s0, s1, s2, s3 float64
		i := 0
		for ; i+4 <= len(blk); i += 4 {
			s0 += max(blk[i], 0) // a zero leaves the sum as sampleMass's skip does
			s1 += max(blk[i+1], 0)
			s2 += max(blk[i+2], 0)
			s3 += max(blk[i+3], 0)
		}
		for ; i < len(blk); i++ {
			s0 += max(blk[i], 0)
		}
		s += (s0 + s1) + (s2 + s3)
		ends[k] = s
	}
	if !(s > 0) {
		return -1
	}
	target := u * s
	cum := 0.0
	for k := range nb {
		if !(ends[k] > target) {
			cum = ends[k]
			continue
		}
		last := -1
		for i := k * massBlock; i < min(n, (k+1)*massBlock); i++ {
			if v := w[i]; v > 0 {
				last = i
				if cum += v; cum > target {
					return i
				}
			}
		}
		return last // rounding: the block's total passed target, its scan not
	}
	for i := n - 1; i >= 0; i-- { // rounding: u·s at or above s
		if w[i] > 0 {
			return i
		}
	}
	return -1
}
