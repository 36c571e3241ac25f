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

// TestWarpCacheBudget: rows beyond the cache's byte budget are computed
// without it (their laws still exact), and the cached rows never hold
// more than warpCacheBytes.
func TestWarpCacheBudget(t *testing.T) {
	const v = 1 << 16 // 1 MiB an entry
	m := QMismatch{T: 0.75}
	for i := range 2 * warpCacheBytes / (16 * v) {
		row := make([]float64, v)
		for y := range row {
			row[y] = float64(1+y%13) + float64(i)/1024 // distinct rows
		}
		sim.Normalize(row)
		q := sim.F64(row)
		s, top := m.rawNorm(q)
		got := warpedOf(m, q)
		for _, y := range []int{0, i % v, v - 1} {
			if want := m.pow(q.At(y), top) / s; math.Float64bits(got[y]) != math.Float64bits(want) {
				t.Fatalf("row %d: q'(%d) = %v, want %v", i, y, got[y], want)
			}
		}
		if b := warpBytes.Load(); b > warpCacheBytes {
			t.Fatalf("after %d rows the cache holds %d bytes, over its %d", i+1, b, warpCacheBytes)
		}
	}
}
