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
	st := newRRSScalar(&t.Nodes[n])
	for _, c := range st.nd.Draws {
		x := t.Nodes[c].Token
		if rng.Float64() < st.ratio(x) {
			return c, 0
		}
		st.reject(x)
	}
	return -1, st.emit(rng, t.V)
}

// rrsScalar is the scalar state of recursive rejection sampling without
// replacement at one node (see the top of this file): the residual
// W/z with W = (p - a q)+ on the tokens not rejected and the rejected
// tokens' frozen weights, and the draft mass s not yet rejected.
// RRSWithout's sampler and Traversal's nodes of weight 1 share it.
type rrsScalar struct {
	nd     *sim.Node
	rej    [64]int     // rejected tokens
	frozen [64]float64 // their weights (in the scale of Z)
	nr     int
	a, z   float64 // r = W/z
	s      float64 // s = q·1[not rejected]/s
	full   float64 // Σ_t (p - a q)+ over all tokens at the current a
}

func newRRSScalar(nd *sim.Node) rrsScalar { return rrsScalar{nd: nd, z: 1, s: 1} }

func (st *rrsScalar) weight(x int) float64 { return math.Max(st.nd.P.At(x)-st.a*st.nd.Q.At(x), 0) }

// ratio returns r(x)/s(x), the acceptance ratio of the next draw x.
func (st *rrsScalar) ratio(x int) float64 { return (st.weight(x) / st.z) / (st.nd.Q.At(x) / st.s) }

// reject updates the state after the draw x was rejected.
func (st *rrsScalar) reject(x int) {
	nd := st.nd
	qx := nd.Q.At(x)
	na := st.a + st.z/st.s
	full0 := na * sim.ResidualMass(1/na, nd.P, nd.Q)
	nz := full0
	for k := range st.nr {
		y := st.rej[k]
		nz += st.frozen[k] - math.Max(nd.P.At(y)-na*nd.Q.At(y), 0)
	}
	if nz > 0 {
		st.a, st.z, st.full = na, nz, full0
	}
	if st.nr < len(st.rej) {
		st.rej[st.nr], st.frozen[st.nr] = x, st.weight(x)
		st.nr++
	}
	if st.s -= qx; !(st.s > 0) {
		st.s = 0
	}
}

// emit draws the emitted token from W/z: the rejected tokens' frozen
// weights, then (p - a q)+ over the others.
func (st *rrsScalar) emit(rng *rand.Rand, v int) int {
	nd, a, rej := st.nd, st.a, st.rej[:st.nr]
	target := rng.Float64() * st.z
	for k := range rej {
		if target < st.frozen[k] {
			return rej[k]
		}
		target -= st.frozen[k]
	}
	if a > 0 {
		// (p - a q)+ restricted to the tokens not rejected: sample the
		// unrestricted residual and retry on a rejected token (rejection
		// sampling, so the law is the restriction); the explicit loop
		// below is the fallback when the rejected tokens hold most of it.
		for range 16 {
			y := sim.SampleResidual(rng.Float64(), 1/a, nd.P, nd.Q, st.full/a)
			if y >= 0 && !isIn(rej, y) {
				return y
			}
		}
		target = rng.Float64() * (st.z - sumOf(st.frozen[:st.nr]))
	}
	last := -1
	for y := 0; y < v; y++ {
		w := nd.P.At(y) - a*nd.Q.At(y)
		if !(w > 0) || isIn(rej, y) {
			continue
		}
		last = y
		if target < w {
			return y
		}
		target -= w
	}
	if last < 0 { // rounding left nothing outside the rejected tokens
		return sim.SampleRow(rng.Float64(), nd.P)
	}
	return last
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
