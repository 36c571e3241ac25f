package algos

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/specsim/specsim/sim"
)

// The cache keeps up to warpCacheSize warped rows, in sets of warpWays
// slots (a row may sit in any slot of its set, so two hot rows whose
// hashes agree do not evict each other at every step), and at most
// warpCacheBytes of them: the audit's 192 (its pool's 64 draft rows under
// three warps) fit with room to spare; a large vocabulary's rows are
// computed without the cache once the budget is spent (an entry counts
// the residual it may gain, entryBytes).
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
	raw []byte // the row's values as stored, byte for byte
	qp  []float64
	// res is the residual (p - q')+ of the first target row drawn beside
	// this draft row (a pool pairs each draft row with one target row), nil
	// until then and on an entry the cache did not keep.
	res    atomic.Pointer[warpedResidual]
	cached bool
}

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
func warpedOf[W warp](m W, q sim.Row) *warpedRow {
	h := warpSlot(rowHash(q), m.key())
	set := warpCache[h&^(warpWays-1) : h&^(warpWays-1)+warpWays]
	for i := range set {
		if e := set[i].Load(); e != nil && e.m == any(m) && sameRow(e, q) {
			return e
		}
	}
	s, top := m.rawNorm(q)
	e := &warpedRow{m: m, raw: bytes.Clone(rowBytes(q)), qp: make([]float64, q.Len())}
	for y := range e.qp {
		e.qp[y] = m.pow(q.At(y), top) / s
	}
	e.cached = true // before the store publishes e; e is still ours if it fails
	if !warpStore(set, e, h) {
		e.cached = false
	}
	return e
}

// residual returns warpResidual(u, p, e.qp), bit for bit: from the
// entry's residual when p is the target row it was made for (the same
// terms summed in the same order, and the first running sum above u·z
// found by bisection, the sums never decreasing), else by the two passes.
func (e *warpedRow) residual(u float64, p sim.Row) (float64, int) {
	r := e.res.Load()
	if r == nil && e.cached { // its bytes were counted with the entry's
		r = newWarpedResidual(p, e.qp)
		if !e.res.CompareAndSwap(nil, r) {
			r = e.res.Load()
		}
	}
	if r == nil || !bytes.Equal(r.raw, rowBytes(p)) {
		return warpResidual(u, p, e.qp)
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

// warpStore puts e into an empty slot of set, else into the slot h
// names, within the cache's byte budget, and reports whether it did.
func warpStore(set []atomic.Pointer[warpedRow], e *warpedRow, h int) bool {
	size := entryBytes(e)
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
		freed = entryBytes(old)
	}
	if warpBytes.Load()+size-freed > warpCacheBytes {
		return false
	}
	if slot.CompareAndSwap(old, e) {
		warpBytes.Add(size - freed)
		return true
	}
	return false
}

// entryBytes is the bytes an entry may hold: its row, q' and the
// residual it may gain (the target row, 8 B a token at most, and a running
// sum and an index per token, 12 B).
func entryBytes(e *warpedRow) int64 { return int64(len(e.raw) + (8+8+12)*len(e.qp)) }

// warpSlot is the slot of a row of hash h under the warp of key key: the
// top bits of their Fibonacci hash.
func warpSlot(h, key uint64) int {
	return int((h ^ key*0xbf58476d1ce4e5b9) * 0x9e3779b97f4a7c15 >> (64 - warpCacheBits))
}

// hashSeed keys rowHash; a process's own seed only places rows in slots,
// and an entry serves a row only when its bytes agree (sameRow).
var hashSeed = maphash.MakeSeed()

// rowHash hashes q's values as stored, their bytes.
func rowHash(q sim.Row) uint64 { return maphash.Bytes(hashSeed, rowBytes(q)) }

// rowBytes views q's storage as bytes, without copying: the hash and the
// comparison then run at memory speed (a float's bits are its bytes).
func rowBytes(q sim.Row) []byte {
	f32, f64 := q.Data()
	if f32 != nil {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f32))), 4*len(f32))
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f64))), 8*len(f64))
}

// sameRow reports whether q holds exactly the values of e's row, bit for
// bit: as many values in as many bytes (so of the same storage type), and
// the same bytes.
func sameRow(e *warpedRow, q sim.Row) bool {
	return len(e.qp) == q.Len() && bytes.Equal(e.raw, rowBytes(q))
}
