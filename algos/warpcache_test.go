package algos

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestWarpedOfServesOnlyItsRow: warpedOf gives pow(q(y), top)/s bit for
// bit, from the cache or not; a row whose storage is overwritten with
// other values, or the same row under another warp, gets its own law,
// never the stale one.
func TestWarpedOfServesOnlyItsRow(t *testing.T) {
	want := func(m warp, q sim.Row) []float64 {
		s, top := m.rawNorm(q)
		out := make([]float64, q.Len())
		for y := range out {
			out[y] = m.pow(q.At(y), top) / s
		}
		return out
	}
	same := func(name string, got, w []float64) {
		t.Helper()
		if len(got) != len(w) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(w))
		}
		for y := range w {
			if math.Float64bits(got[y]) != math.Float64bits(w[y]) {
				t.Fatalf("%s: q'(%d) = %v, want %v", name, y, got[y], w[y])
			}
		}
	}
	buf := []float32{0.5, 0.25, 0.125, 0.125}
	q := sim.F32(buf)
	a, b := QMismatch{T: 0.5}, QMismatch{T: 0.90625}
	for range 2 { // a miss, then a hit
		same("T=0.5", warpedOf(a, q), want(a, q))
		same("T=0.90625", warpedOf(b, q), want(b, q))
		same("reduced precision", warpedOf(ReducedPrecision{}, q), want(ReducedPrecision{}, q))
	}
	copy(buf, []float32{0.1, 0.2, 0.3, 0.4}) // the same storage, other values
	same("overwritten row", warpedOf(a, q), want(a, q))
	same("overwritten row, again", warpedOf(a, q), want(a, q))
}
