package binenc

import (
	"errors"
	"math"
	"testing"
)

// TestRoundTrip: every Append's value reads back, and the reader ends
// with nothing left.
func TestRoundTrip(t *testing.T) {
	b := AppendUvarint(nil, 1<<40)
	b = AppendVarint(b, -7)
	b = AppendFloat(b, math.Pi)
	b = AppendBytes(b, []byte("shard"))
	b = AppendInts(b, []int64{3, -1, 1 << 50})
	r := NewReader(b, 0)
	u, v, f, s, xs := r.Uvarint(), r.Varint(), r.Float(), r.Bytes(), r.Ints()
	if r.Err() != nil || u != 1<<40 || v != -7 || f != math.Pi || string(s) != "shard" || len(xs) != 3 || xs[2] != 1<<50 || r.Len() != 0 {
		t.Fatalf("read %v %v %v %q %v, err %v, %d left", u, v, f, s, xs, r.Err(), r.Len())
	}
}

// TestRefuses: a payload cut at any length is refused with ErrShort
// (never a panic), a length beyond the payload or the budget is refused
// before allocating, an out-of-range Int names its field, and the first
// error sticks.
func TestRefuses(t *testing.T) {
	b := AppendInts(AppendBytes(AppendFloat(nil, 1), []byte("abc")), []int64{1, 2, 3})
	for n := range len(b) {
		r := NewReader(b[:n], 0)
		r.Float()
		r.Bytes()
		r.Ints()
		if !errors.Is(r.Err(), ErrShort) {
			t.Fatalf("cut at %d of %d: %v", n, len(b), r.Err())
		}
	}
	huge := AppendUvarint(nil, 1<<60)
	if r := NewReader(append(huge, make([]byte, 64)...), 0); r.Ints() != nil || !errors.Is(r.Err(), ErrShort) {
		t.Errorf("a length beyond the payload: %v", r.Err())
	}
	r := NewReader(AppendInts(nil, make([]int64, 100)), 100)
	if r.Ints() != nil || r.Err() == nil || errors.Is(r.Err(), ErrShort) {
		t.Errorf("100 counts under a 100-byte budget: %v", r.Err())
	}
	r = NewReader(AppendVarint(nil, 9), 0)
	if r.Int("shard", 0, 3); r.Err() == nil || r.Err().Error() != "shard = 9 is outside [0, 3] (a damaged file)" {
		t.Errorf("out of range: %v", r.Err())
	}
	if r.Uvarint() != 0 || r.Err().Error() != "shard = 9 is outside [0, 3] (a damaged file)" {
		t.Error("the first error did not stick")
	}
}
