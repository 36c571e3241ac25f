package algos

import (
	"math"
	"sync/atomic"

	"github.com/specsim/specsim/sim"
)

// The cache keeps up to warpCacheSize warped rows, in sets of warpWays
// slots (a row may sit in any slot of its set, so two hot rows whose
// hashes agree do not evict each other at every step), and at most
// warpCacheBytes of them: the audit's 192 (its pool's 64 draft rows under
// three warps) fit with room to spare; a large vocabulary's rows are
// computed without the cache once the budget is spent.
const (
	warpCacheBits  = 9
	warpCacheSize  = 1 << warpCacheBits
	warpWays       = 4
	warpCacheBytes = 64 << 20
)

// warpBytes is the bytes the cached rows hold.
var warpBytes atomic.Int64

// warpedRow is one draft row's warped law q'(y) = pow(q(y), top)/s
// (warp), the warp it was computed for, and the row's values: an entry
// serves a row only when the warp and every value agree, so a row is
// found by what it holds, wherever it is stored (a pool's own row, or a
// copy in a scratch buffer that other rows overwrite).
type warpedRow struct {
	m   any
	src []float64
	qp  []float64
}

// warpCache holds the warped rows, an entry per slot (a hash of the row's
// values and the warp); entries are immutable once stored, so concurrent
// workers read them without locks and a race only costs a recomputation.
var warpCache [warpCacheSize]atomic.Pointer[warpedRow]

// warpedOf returns q' for draft row q under m: pow(q(y), top)/s with (s,
// top) = m.rawNorm(q), the very values warpAccept and warpLaw divide by,
// so a cached row gives bit-identical outcomes. A pool's rows recur at
// every step, and computing q' is a pass of pow over the vocabulary
// (math.Log or repeated square roots per token), which made the
// q-mismatch and reduced-precision rows most of the audit's time; the
// hash and the comparison are two cheap passes.
func warpedOf[W warp](m W, q sim.Row) []float64 {
	h := warpSlot(rowHash(q), m.key())
	set := warpCache[h&^(warpWays-1) : h&^(warpWays-1)+warpWays]
	for i := range set {
		if e := set[i].Load(); e != nil && e.m == any(m) && sameRow(e.src, q) {
			return e.qp
		}
	}
	s, top := m.rawNorm(q)
	e := &warpedRow{m: m, src: q.Float64s(nil), qp: make([]float64, q.Len())}
	for y := range e.qp {
		e.qp[y] = m.pow(q.At(y), top) / s
	}
	warpStore(set, e, h)
	return e.qp
}

// warpStore puts e into an empty slot of set, else into the slot h
// names, within the cache's byte budget.
func warpStore(set []atomic.Pointer[warpedRow], e *warpedRow, h int) {
	size := int64(16 * len(e.qp))
	slot := &set[h%warpWays]
	for i := range set {
		if set[i].Load() == nil {
			slot = &set[i]
			break
		}
	}
	old := slot.Load()
	freed := int64(0)
	if old != nil {
		freed = int64(16 * len(old.qp))
	}
	if warpBytes.Load()+size-freed > warpCacheBytes {
		return
	}
	if slot.CompareAndSwap(old, e) {
		warpBytes.Add(size - freed)
	}
}

// warpSlot is the slot of a row of hash h under the warp of key key: the
// top bits of their Fibonacci hash.
func warpSlot(h, key uint64) int {
	return int((h ^ key*0xbf58476d1ce4e5b9) * 0x9e3779b97f4a7c15 >> (64 - warpCacheBits))
}

// rowHash hashes q's length and values (their bits, as stored).
func rowHash(q sim.Row) uint64 {
	h := uint64(q.Len())
	f32, f64 := q.Data()
	for _, v := range f32 {
		h = (h ^ uint64(math.Float32bits(v))) * 0x100000001b3
	}
	for _, v := range f64 {
		h = (h ^ math.Float64bits(v)) * 0x100000001b3
	}
	return h
}

// sameRow reports whether q holds exactly the values src does.
func sameRow(src []float64, q sim.Row) bool {
	if len(src) != q.Len() {
		return false
	}
	f32, f64 := q.Data()
	for y, v := range f32 {
		if math.Float64bits(float64(v)) != math.Float64bits(src[y]) {
			return false
		}
	}
	for y, v := range f64 {
		if math.Float64bits(v) != math.Float64bits(src[y]) {
			return false
		}
	}
	return true
}
