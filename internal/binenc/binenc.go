package binenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// AppendUvarint appends x as an unsigned varint.
func AppendUvarint(b []byte, x uint64) []byte { return binary.AppendUvarint(b, x) }

// AppendVarint appends x as a signed (zig-zag) varint.
func AppendVarint(b []byte, x int64) []byte { return binary.AppendVarint(b, x) }

// AppendFloat appends x's IEEE 754 bits, little-endian.
func AppendFloat(b []byte, x float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
}

// AppendBytes appends p with its length first.
func AppendBytes(b, p []byte) []byte { return append(AppendUvarint(b, uint64(len(p))), p...) }

// AppendInts appends a slice of counts: its length, then each.
func AppendInts(b []byte, xs []int64) []byte {
	b = AppendUvarint(b, uint64(len(xs)))
	for _, x := range xs {
		b = AppendVarint(b, x)
	}
	return b
}

// ErrShort is the error of a payload that ends before its fields do.
var ErrShort = errors.New("the payload ends early (a truncated or damaged file)")

// Reader reads a payload written with the Append functions. The first
// error sticks: later reads return zero values, and Err reports it.
// Budget is the most bytes the slices it returns may take together
// (counted as 8 bytes an element); a length beyond it, or beyond what
// the payload can hold, is refused before anything is allocated.
type Reader struct {
	b      []byte
	err    error
	budget int64
}

// NewReader reads b, allocating at most budget bytes (<= 0: no limit
// beyond the payload's own size).
func NewReader(b []byte, budget int64) *Reader {
	if budget <= 0 {
		budget = math.MaxInt64
	}
	return &Reader{b: b, budget: budget}
}

// Err returns the first error.
func (r *Reader) Err() error { return r.err }

// Len returns the bytes not yet read.
func (r *Reader) Len() int { return len(r.b) }

// Fail records err (the first one sticks).
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.Fail(ErrShort)
		return 0
	}
	r.b = r.b[n:]
	return x
}

// Varint reads a signed varint.
func (r *Reader) Varint() int64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.Fail(ErrShort)
		return 0
	}
	r.b = r.b[n:]
	return x
}

// Int reads a signed varint that must lie in [lo, hi]; what names it in
// the error.
func (r *Reader) Int(what string, lo, hi int64) int64 {
	x := r.Varint()
	if r.err == nil && (x < lo || x > hi) {
		r.Fail(fmt.Errorf("%s = %d is outside [%d, %d] (a damaged file)", what, x, lo, hi))
		return 0
	}
	return x
}

// Float reads a float64.
func (r *Reader) Float() float64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.Fail(ErrShort)
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return x
}

// length reads a length of elements that take at least minBytes each in the
// payload and 8 bytes each once decoded: it must fit what is left of the
// payload and of the budget.
func (r *Reader) length(minBytes int) int {
	n := r.Uvarint()
	if r.err != nil {
		return 0
	}
	switch {
	case n > uint64(len(r.b)/max(minBytes, 1)):
		r.Fail(ErrShort)
		return 0
	case n > uint64(r.budget/8):
		r.Fail(fmt.Errorf("the payload asks for %d elements, beyond the memory budget of %d bytes; raise the budget or check the file", n, r.budget))
		return 0
	}
	r.budget -= int64(n) * 8
	return int(n)
}

// Bytes reads a length-prefixed byte string (a copy).
func (r *Reader) Bytes() []byte {
	n := r.length(1)
	if r.err != nil {
		return nil
	}
	p := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return p
}

// Ints reads a slice of counts written by AppendInts.
func (r *Reader) Ints() []int64 {
	n := r.length(1)
	if r.err != nil {
		return nil
	}
	xs := make([]int64, n)
	for i := range xs {
		xs[i] = r.Varint()
	}
	return xs
}

// Count reads a length of elements that take at least minBytes each in
// the payload, refused like a slice's (see Reader) when it cannot fit.
func (r *Reader) Count(minBytes int) int { return r.length(minBytes) }
