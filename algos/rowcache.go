package algos

import (
	"bytes"
	"hash/maphash"
	"sync/atomic"
	"unsafe"

	"github.com/specsim/specsim/sim"
)

// rowCache keeps values derived from rows (a warped draft law, a rule's
// decision at a position) found by the rows' values: a pool's rows recur
// at every step, and the derivations are passes over the vocabulary
// (logarithms, sorts) where finding the rows is a hash and a comparison of
// their bytes. An entry serves only rows whose every byte, and a key
// (the warp, the rule) that agree, wherever the rows are stored (a pool's
// own rows, or copies in a scratch buffer that other rows overwrite).
//
// The cache keeps up to rowCacheSize entries, in sets of rowCacheWays
// slots (a row may sit in any slot of its set, so two hot rows whose
// hashes agree do not evict each other at every step), and at most
// rowCacheBytes of them with every other rowCache's (one budget for the
// process, rowBytesUsed), an entry at most a rowEntryMax of it; past the
// budget values are computed without it.
// Entries are immutable once stored, so concurrent workers read them
// without locks and a race only costs a recomputation.
type rowCache[K comparable, E any] struct {
	slots [rowCacheSize]atomic.Pointer[rowEntry[K, E]]
}

const (
	rowCacheBits  = 9
	rowCacheSize  = 1 << rowCacheBits
	rowCacheWays  = 4
	rowCacheBytes = 64 << 20
	rowEntryMax   = rowCacheBytes / 8
)

// rowBytesUsed is the bytes every rowCache's entries hold.
var rowBytesUsed atomic.Int64

// rowEntry is a cached value, with the key and the rows' bytes it was
// derived from.
type rowEntry[K comparable, E any] struct {
	key  K
	rows [2][]byte // the rows' values as stored, byte for byte (rows[1] nil for one row)
	lens [2]int
	val  E
	size int64 // the bytes counted against the budget
}

// find returns the entry for key and rows p and q (q zero for a value of
// one row) and the slot it would take, nil when none is kept; keyBits
// mixes the key into the slot (its parameters' bits).
func (c *rowCache[K, E]) find(key K, keyBits uint64, p, q sim.Row) (*rowEntry[K, E], int) {
	h := maphash.Bytes(rowSeed, rowBytes(p))
	if !q.IsZero() {
		h = h*0x9e3779b97f4a7c15 ^ maphash.Bytes(rowSeed, rowBytes(q))
	}
	slot := int((h ^ keyBits*0xbf58476d1ce4e5b9) * 0x9e3779b97f4a7c15 >> (64 - rowCacheBits))
	for i := range rowCacheWays {
		if e := c.slots[slot&^(rowCacheWays-1)+i].Load(); e != nil && e.key == key && e.holds(p, q) {
			return e, slot
		}
	}
	return nil, slot
}

func (e *rowEntry[K, E]) holds(p, q sim.Row) bool {
	return e.lens[0] == p.Len() && e.lens[1] == q.Len() &&
		bytes.Equal(e.rows[0], rowBytes(p)) && bytes.Equal(e.rows[1], rowBytes(q))
}

// newRowEntry returns an entry for val derived under key from p and q,
// counting extra bytes beside the rows' own.
func newRowEntry[K comparable, E any](key K, p, q sim.Row, val E, extra int64) *rowEntry[K, E] {
	e := &rowEntry[K, E]{key: key, val: val, lens: [2]int{p.Len(), q.Len()},
		rows: [2][]byte{bytes.Clone(rowBytes(p)), bytes.Clone(rowBytes(q))}}
	e.size = int64(len(e.rows[0])+len(e.rows[1])) + extra
	return e
}

// store keeps val, derived under key from p and q, in an empty slot of
// slot's set, else in slot, within the byte budget (the rows' bytes and
// extra), and reports whether it did. The rows are copied only once the
// entry fits: a spent budget costs a miss no allocation.
func (c *rowCache[K, E]) store(slot int, key K, p, q sim.Row, val E, extra int64) bool {
	set := c.slots[slot&^(rowCacheWays-1) : slot&^(rowCacheWays-1)+rowCacheWays]
	at := &c.slots[slot]
	for i := range set {
		if set[i].Load() == nil {
			at = &set[i]
			break
		}
	}
	old := at.Load()
	freed := int64(0)
	if old != nil {
		freed = old.size
	}
	size := int64(len(rowBytes(p))+len(rowBytes(q))) + extra
	if size > rowEntryMax || rowBytesUsed.Load()+size-freed > rowCacheBytes {
		return false
	}
	e := newRowEntry(key, p, q, val, extra)
	if at.CompareAndSwap(old, e) {
		rowBytesUsed.Add(e.size - freed)
		return true
	}
	return false
}

// rowSeed keys the rows' hashes; a process's own seed only places rows in
// slots, and an entry serves rows only when their bytes agree.
var rowSeed = maphash.MakeSeed()

// rowBytes views r's storage as bytes, without copying: the hash and the
// comparison then run at memory speed (a float's bits are its bytes).
func rowBytes(r sim.Row) []byte {
	f32, f64 := r.Data()
	if f32 != nil {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f32))), 4*len(f32))
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f64))), 8*len(f64))
}
