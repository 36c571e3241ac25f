package check

import "testing"

// The half-shift tests pair row j with row j+h of the same batch only,
// count each pair once per position (and once in the first tokens'
// table), and their counts survive MarshalBinary and UnmarshalBinary.
func TestShiftRecordAndRoundTrip(t *testing.T) {
	l := newShiftLayout(true, 5, 2, 2) // h = 2: pairs (0, 2), (1, 3); row 4 alone
	c := l.newCounts()
	u := func(x float64) []float64 { return []float64{x, 1 - x} }
	for j, x := range []float64{0.1, 0.2, 0.7, 0.9, 0.4} {
		l.record(c, j, int64(10+j), u(x))
	}
	l.record(c, 3, 30, u(0.9)) // row 3 of another batch: row 1 of it was not seen
	// pair (0.1, 0.7): bins (0, 1) at position 1, (1, 0) at position 2;
	// pair (0.2, 0.9): the same
	want := []int64{0, 2, 2, 0, 0, 2, 0, 0}
	for i, w := range want {
		if c.cells[i] != w {
			t.Fatalf("cells %v, want %v", c.cells, want)
		}
	}
	b := (&shiftFamily{l: l, c: c}).appendBinary(nil)
	d := l.newCounts()
	if err := readFamily(&shiftFamily{l: l, c: d}, b); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if d.cells[i] != want[i] {
			t.Fatalf("round trip %v, want %v", d.cells, want)
		}
	}
	if err := readFamily(&shiftFamily{l: l, c: d}, b[:len(b)-1]); err == nil {
		t.Error("truncated counts read without an error")
	}
	if err := readFamily(&shiftFamily{l: l, c: d}, append(b, 0)); err == nil {
		t.Error("trailing bytes read without an error")
	}
	if got := newShiftLayout(true, 3, 2, 2); got.half != 0 {
		t.Errorf("batch 3 has half-shift tests (h = %d); the shift would pair adjacent rows only", got.half)
	}
}
