package algos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

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
		same("T=0.5", warpedOf(a, q).qp, want(a, q))
		same("T=0.90625", warpedOf(b, q).qp, want(b, q))
		same("reduced precision", warpedOf(ReducedPrecision{}, q).qp, want(ReducedPrecision{}, q))
	}
	if n := testing.AllocsPerRun(100, func() { warpedOf(b, q) }); n != 0 {
		t.Fatalf("a kept row costs %v allocations a lookup, want 0", n)
	}
	copy(buf, []float32{0.1, 0.2, 0.3, 0.4}) // the same storage, other values
	same("overwritten row", warpedOf(a, q).qp, want(a, q))
	same("overwritten row, again", warpedOf(a, q).qp, want(a, q))
	// the same bytes read as two float64s are another row: the entry
	// holds as many values as its row had
	wide := sim.F64(unsafe.Slice((*float64)(unsafe.Pointer(&buf[0])), 2))
	if ent := newRowEntry(a.key(), q, sim.Row{}, 0, 0); ent.holds(wide, sim.Row{}) || !ent.holds(q, sim.Row{}) {
		t.Fatalf("holds: a float32 row's entry serves the float64 row of its bytes (%v) or not its own (%v)", ent.holds(wide, sim.Row{}), ent.holds(q, sim.Row{}))
	}
	same("the float32 row's bytes as float64", warpedOf(a, wide).qp, want(a, wide))
}

// TestWarpCacheBudget: rows beyond the cache's byte budget are computed
// without it (their laws still exact), and the cached rows never hold
// more than warpCacheBytes.
func TestWarpCacheBudget(t *testing.T) {
	resetRowCaches(t)
	t.Cleanup(func() { resetRowCaches(t) })
	const v = 1 << 16 // 2.25 MiB an entry, under rowEntryMax
	m := QMismatch{T: 0.75}
	for i := range 2 * rowCacheBytes / (36 * v) { // 36 B a token: the row's bytes, q'(y) and a residual's
		row := make([]float64, v)
		for y := range row {
			row[y] = float64(1+y%13) + float64(i)/1024 // distinct rows
		}
		sim.Normalize(row)
		q := sim.F64(row)
		s, top := m.rawNorm(q)
		got := warpedOf(m, q).qp
		for _, y := range []int{0, i % v, v - 1} {
			if want := m.pow(q.At(y), top) / s; math.Float64bits(got[y]) != math.Float64bits(want) {
				t.Fatalf("row %d: q'(%d) = %v, want %v", i, y, got[y], want)
			}
		}
		if b := rowBytesUsed.Load(); b > rowCacheBytes {
			t.Fatalf("after %d rows the cache holds %d bytes, over its %d", i+1, b, rowCacheBytes)
		}
	}
}

// TestWarpedResidual: the residual a cached entry keeps for its target
// row samples what warpResidual's two passes do, bit for bit (z and the
// token), at coins drawn uniformly, at the running sums themselves and at
// their ends; for another target row (or a row overwritten in place) it
// falls back to the passes.
func TestWarpedResidual(t *testing.T) {
	resetRowCaches(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 40 {
		v := 1 + rng.IntN(300)
		p32, q32 := make([]float32, v), make([]float32, v)
		for y := range v {
			p32[y], q32[y] = float32(rng.ExpFloat64()), float32(rng.ExpFloat64())
			if rng.IntN(4) == 0 {
				p32[y] = 0 // tokens with no residual term
			}
		}
		if trial%10 == 0 {
			copy(p32, q32) // p = q: the warp alone makes the residual
		}
		normalize32(p32)
		normalize32(q32)
		p, q := sim.F32(p32), sim.F32(q32)
		m := QMismatch{T: []float64{0.5, 0.90625, 1.7}[trial%3]}
		e := warpedOf(m, q)
		e2 := warpedOf(m, q) // served from the cache, with its residual
		if !e.cached || e2 != e {
			t.Fatalf("trial %d: the entry was not cached (%v) or not served again (%v)", trial, e.cached, e2 == e)
		}
		coins := []float64{-1, 0, 1, math.Nextafter(1, 0)}
		for range 50 {
			coins = append(coins, rng.Float64())
		}
		z, _ := warpResidual(-1, p, e.qp)
		c := 0.0
		for y := range v {
			if d := p.At(y) - e.qp[y]; d > 0 {
				c += d
				coins = append(coins, c/z, math.Nextafter(c/z, 0), math.Nextafter(c/z, 2))
			}
		}
		for _, u := range coins {
			wz, wy := warpResidual(u, p, e.qp)
			gz, gy := e.residual(u, p)
			if math.Float64bits(gz) != math.Float64bits(wz) || gy != wy {
				t.Fatalf("trial %d, V = %d, u = %v: residual gives z = %v, token %d; the passes %v, %d", trial, v, u, gz, gy, wz, wy)
			}
		}
		if e.res.Load() == nil {
			t.Fatalf("trial %d: the cached entry kept no residual", trial)
		}
		other := slices.Clone(p32)
		other[0], other[v-1] = other[v-1], other[0]
		for _, u := range coins {
			wz, wy := warpResidual(u, sim.F32(other), e.qp)
			if gz, gy := e.residual(u, sim.F32(other)); math.Float64bits(gz) != math.Float64bits(wz) || gy != wy {
				t.Fatalf("trial %d: another target row at u = %v gives %v, %d; the passes %v, %d", trial, u, gz, gy, wz, wy)
			}
		}
	}
}

func normalize32(r []float32) {
	s := float32(0)
	for _, v := range r {
		s += v
	}
	for i := range r {
		r[i] /= s
	}
}

// TestRowCacheEntryMax: a row whose entry would take more than
// rowEntryMax of the budget is warped without being kept.
func TestRowCacheEntryMax(t *testing.T) {
	resetRowCaches(t)
	v := int(rowEntryMax/36) + 1 // 36 B a token: over the cap
	row := make([]float64, v)
	for y := range row {
		row[y] = 1
	}
	sim.Normalize(row)
	used := rowBytesUsed.Load()
	if w := warpedOf(QMismatch{T: 0.5}, sim.F64(row)); w.cached || rowBytesUsed.Load() != used {
		t.Fatalf("a row of %d tokens (%d B) was kept (%v) or counted (%d -> %d B)", v, 36*v, w.cached, used, rowBytesUsed.Load())
	}
}
