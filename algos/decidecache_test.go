package algos

import (
	"slices"
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestDecided: a decision is computed once per rule and rows, found again
// by the rows' values wherever they are stored, and computed anew for
// another rule, other values, or a vocabulary below decideMinV; every
// rule that keeps its decisions serves, for its rows and for copies of
// them, the decision it computes with no cache (under a benchmark), and
// serves it without allocating.
func TestDecided(t *testing.T) {
	resetRowCaches(t)
	var c rowCache[Fuzzy, decision]
	calls := 0
	count := func(k float64) func() decision {
		return func() decision { calls++; return decision{mode: modeRatio, k: k} }
	}
	p32 := make([]float32, decideMinV)
	q32 := make([]float32, decideMinV)
	for i := range p32 {
		p32[i], q32[i] = float32(i+1)/528, float32(decideMinV-i)/528
	}
	p, q := sim.F32(p32), sim.F32(q32)
	steps := []struct {
		what  string
		rule  Fuzzy
		p, q  sim.Row
		k     float64 // what decide would return
		wantK float64
		calls int
	}{
		{"first", Fuzzy{T: 0.1}, p, q, 1, 1, 1},
		{"again", Fuzzy{T: 0.1}, p, q, 2, 1, 1},
		{"copies of the rows", Fuzzy{T: 0.1}, sim.F32(slices.Clone(p32)), sim.F32(slices.Clone(q32)), 3, 1, 1},
		{"the rows as float64", Fuzzy{T: 0.1}, sim.F64(p.Float64s(nil)), sim.F64(q.Float64s(nil)), 4, 4, 2},
		{"another rule", Fuzzy{T: 0.2}, p, q, 5, 5, 3},
		{"rows swapped", Fuzzy{T: 0.1}, q, p, 6, 6, 4},
		{"one row only", Fuzzy{T: 0.1}, p, sim.Row{}, 7, 7, 5},
		{"a short row", Fuzzy{T: 0.1}, sim.F32(p32[:decideMinV-1]), sim.F32(q32[:decideMinV-1]), 8, 8, 6},
		{"the short row again", Fuzzy{T: 0.1}, sim.F32(p32[:decideMinV-1]), sim.F32(q32[:decideMinV-1]), 9, 9, 7},
	}
	for _, s := range steps {
		d := decided(&c, s.rule, bits2(s.rule.T, 0), s.p, s.q, count(s.k))
		if d.k != s.wantK || calls != s.calls {
			t.Fatalf("%s: decision k = %v after %d computations, want %v after %d", s.what, d.k, calls, s.wantK, s.calls)
		}
	}
	end := sim.BeginTiming() // a benchmark: every decision computed
	for i := range 2 {
		if d := decided(&c, Fuzzy{T: 0.3}, bits2(0.3, 0), p, q, count(11)); d.k != 11 || calls != 8+i {
			t.Fatalf("under a benchmark, ask %d: k = %v after %d computations, want 11 after %d", i, d.k, calls, 8+i)
		}
	}
	end()
	if d := decided(&c, Fuzzy{T: 0.3}, bits2(0.3, 0), p, q, count(12)); d.k != 12 {
		t.Fatalf("after the benchmark: k = %v, want 12 (nothing was kept under it)", d.k)
	}
	rowBytesUsed.Store(rowCacheBytes) // a spent budget: misses keep nothing and copy nothing
	spent := Fuzzy{T: 0.4}
	before, f := calls, count(13)
	if n := testing.AllocsPerRun(20, func() { decided(&c, spent, bits2(0.4, 0), p, q, f) }); n != 0 || calls == before {
		t.Fatalf("with the budget spent a miss costs %v allocations (want 0) after %d computations", n, calls-before)
	}
	if e, _ := c.find(spent, bits2(0.4, 0), p, q); e != nil {
		t.Fatal("with the budget spent a decision was kept")
	}
	resetRowCaches(t)
	p32[3] += 1e-3 // the same storage, another value
	if d := decided(&c, Fuzzy{T: 0.1}, bits2(0.1, 0), p, q, count(10)); d.k != 10 {
		t.Fatalf("a row changed in place: k = %v, want the new 10", d.k)
	}

	rng := sim.NewRand(4, sim.StreamID("algos/decided"))
	for _, r := range []lossyStep{Mentored{D: 0.05}, Mentored{D: 0.05, Bisect: true}, Fuzzy{T: 0.05}, Typical{Eps: 0.3, Delta: 0.09},
		TypicalMedusa{Eps: 0.3, Delta: 0.09}, TypicalArgmax{Eps: 0.3, Delta: 0.09}} {
		for range 5 {
			pp, qq := randPair(rng, 40+rng.IntN(200), 0)
			end := sim.BeginTiming()
			fresh := r.decide(sim.F64(pp), sim.F64(qq)) // computed, not kept
			end()
			a := r.decide(sim.F64(pp), sim.F64(qq)) // computed and kept
			b := r.decide(sim.F64(slices.Clone(pp)), sim.F64(slices.Clone(qq)))
			if a != fresh || b != fresh {
				t.Fatalf("%#v: computed %+v; kept %+v; served for copies %+v", r, fresh, a, b)
			}
			if n := testing.AllocsPerRun(20, func() { r.decide(sim.F64(pp), sim.F64(qq)) }); n != 0 {
				t.Fatalf("%#v: a kept decision costs %v allocations, want 0", r, n)
			}
		}
	}
}

// clear empties c's slots (tests only; their bytes stay counted until
// resetRowCaches).
func (c *rowCache[K, E]) clear() {
	for i := range c.slots {
		c.slots[i].Store(nil)
	}
}

// resetRowCaches empties every row cache and its byte count, so a test
// that asserts what is kept does not depend on what the tests before it
// kept (the serial tests run before the parallel ones resume).
func resetRowCaches(t *testing.T) {
	t.Helper()
	warpCache.clear()
	mentoredDecisions.clear()
	fuzzyDecisions.clear()
	typicalDecisions.clear()
	medusaDecisions.clear()
	argmaxDecisions.clear()
	rowBytesUsed.Store(0)
}
