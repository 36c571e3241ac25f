package algos

import (
	"bytes"
	"slices"
	"sync/atomic"

	"github.com/specsim/specsim/sim"
)

// warpCache holds the warped draft laws (rowCache): the audit's 192 (its
// pool's 64 draft rows under three warps) fit with room to spare; an entry
// counts the residual it may gain (warpedRowBytes).
var warpCache rowCache[warpKey, *warpedRow]

// warpedRow is one draft row's warped law q'(y) = pow(q(y), top)/s
// (warp), with the residual of the first target row drawn beside it.
type warpedRow struct {
	qp []float64
	// res is the residual (p - q')+ of the first target row drawn beside
	// this draft row (a pool pairs each draft row with one target row), nil
	// until then and on a row the cache did not keep.
	res    atomic.Pointer[warpedResidual]
	cached bool
}

// warpedRowBytes is the bytes a warped row of v tokens may hold beside the
// draft row's: q' and the residual it may gain (the target row, 8 B a
// token at most, and a running sum and an index per token, 12 B).
func warpedRowBytes(v int) int64 { return int64((8 + 8 + 12) * v) }

// warpedResidual is the residual (p - q')+ of one target row p against a
// warped row: z = Σ_t (p(t) - q'(t))+ as warpResidual sums it, and the
// running sums cum[k] after each token idx[k] with a positive term, so a
// sample is a binary search instead of two passes over the vocabulary.
type warpedResidual struct {
	raw []byte // p's values as stored
	z   float64
	cum []float64
	idx []int32
}

// warpedOf returns q' for draft row q under m: pow(q(y), top)/s with (s,
// top) = m.rawNorm(q), the very values warpAccept and warpLaw divide by,
// so a cached row gives bit-identical outcomes. Computing q' is a pass of
// pow over the vocabulary (math.Log or repeated square roots per token),
// which made the q-mismatch and reduced-precision rows most of the
// audit's time.
func warpedOf[W warp](m W, q sim.Row) *warpedRow {
	var slot int
	k := m.key()
	if !sim.Timing() { // under a benchmark every row is warped afresh
		var e *rowEntry[warpKey, *warpedRow]
		if e, slot = warpCache.find(k, k.bits, q, sim.Row{}); e != nil {
			return e.val
		}
	}
	s, top := m.rawNorm(q)
	w := &warpedRow{qp: make([]float64, q.Len())}
	for y := range w.qp {
		w.qp[y] = m.pow(q.At(y), top) / s
	}
	if sim.Timing() {
		return w
	}
	w.cached = true // before the store publishes w; w is still ours if it fails
	if !warpCache.store(slot, k, q, sim.Row{}, w, warpedRowBytes(q.Len())) {
		w.cached = false
	}
	return w
}

// residual returns warpResidual(u, p, w.qp), bit for bit: from the
// row's residual when p is the target row it was made for (the same
// terms summed in the same order, and the first running sum above u·z
// found by bisection, the sums never decreasing), else by the two passes.
func (w *warpedRow) residual(u float64, p sim.Row) (float64, int) {
	r := w.res.Load()
	if r == nil && w.cached { // its bytes were counted with the entry's
		r = newWarpedResidual(p, w.qp)
		if !w.res.CompareAndSwap(nil, r) {
			r = w.res.Load()
		}
	}
	if r == nil || !bytes.Equal(r.raw, rowBytes(p)) {
		return warpResidual(u, p, w.qp)
	}
	if u < 0 {
		return r.z, -1
	}
	k, _ := slices.BinarySearchFunc(r.cum, u*r.z, func(c, t float64) int {
		if c > t {
			return 1
		}
		return -1
	})
	switch {
	case k < len(r.cum):
		return r.z, int(r.idx[k])
	case len(r.idx) > 0:
		return r.z, int(r.idx[len(r.idx)-1])
	}
	return r.z, -1
}

func newWarpedResidual(p sim.Row, qp []float64) *warpedResidual {
	z, _ := warpResidual(-1, p, qp)
	r := &warpedResidual{raw: bytes.Clone(rowBytes(p)), z: z}
	c := 0.0
	for t := 0; t < p.Len(); t++ {
		if d := p.At(t) - qp[t]; d > 0 {
			c += d
			r.cum = append(r.cum, c)
			r.idx = append(r.idx, int32(t))
		}
	}
	return r
}
