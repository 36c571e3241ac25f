package algos

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/specsim/specsim/sim"
)

// warpCacheSize is the number of warped rows warpedOf keeps, 2^warpCacheBits:
// a pool's draft rows (contexts × γ, 64 in the audit's) fit with room
// to spare.
const (
	warpCacheBits = 9
	warpCacheSize = 1 << warpCacheBits
)

// warpedRow is one draft row's warped law q'(y) = pow(q(y), top)/s
// (warp), the warp it was computed for, and the row's address, length
// and content: an entry serves a row only when all of them agree, so a
// source that reuses a row's storage for other values misses instead of
// reading a stale law.
type warpedRow struct {
	m   any
	ptr uintptr
	src []float64
	qp  []float64
}

// warpCache holds the warped rows, an entry per slot (hash of the row's
// address and length); entries are immutable once stored, so concurrent
// workers read them without locks and a race only costs a recomputation.
var warpCache [warpCacheSize]atomic.Pointer[warpedRow]

// rowAddr is the address of q's first value (0 for an empty row).
func rowAddr(q sim.Row) uintptr {
	f32, f64 := q.Data()
	switch {
	case len(f32) > 0:
		return uintptr(unsafe.Pointer(&f32[0]))
	case len(f64) > 0:
		return uintptr(unsafe.Pointer(&f64[0]))
	}
	return 0
}

// warpedOf returns q' for draft row q under m: pow(q(y), top)/s with (s,
// top) = m.rawNorm(q), the very values warpAccept and warpLaw divide by,
// so a cached row gives bit-identical outcomes. A pool's rows recur at
// every step, and computing q' is a pass of pow over the vocabulary
// (math.Log or repeated square roots per token), which made the
// q-mismatch and reduced-precision rows most of the audit's time.
func warpedOf[W warp](m W, q sim.Row) []float64 {
	ptr := rowAddr(q)
	slot := &warpCache[warpSlot(ptr, q.Len())]
	if e := slot.Load(); e != nil && e.ptr == ptr && e.m == any(m) && sameRow(e.src, q) {
		return e.qp
	}
	s, top := m.rawNorm(q)
	e := &warpedRow{m: m, ptr: ptr, src: q.Float64s(nil), qp: make([]float64, q.Len())}
	for y := range e.qp {
		e.qp[y] = m.pow(q.At(y), top) / s
	}
	slot.Store(e)
	return e.qp
}

// warpSlot is the slot of the row at address ptr of length n: Fibonacci
// hashing of both, its top bits, since rows laid out in one allocation
// sit a power of two apart and their low address bits agree.
func warpSlot(ptr uintptr, n int) int {
	h := (uint64(ptr) ^ uint64(n)<<48) * 0x9e3779b97f4a7c15
	return int(h >> (64 - warpCacheBits))
}

// sameRow reports whether q holds exactly the values src does.
func sameRow(src []float64, q sim.Row) bool {
	if len(src) != q.Len() {
		return false
	}
	for y, v := range src {
		if math.Float64bits(q.At(y)) != math.Float64bits(v) {
			return false
		}
	}
	return true
}
