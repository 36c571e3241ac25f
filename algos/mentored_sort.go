package algos

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// The two sorts of mentored decoding's exact solve, made cheaper: they
// were four fifths of a solve at V = 32,000 (slices.SortFunc of the
// tokens by ρ, and slices.Sort of the breakpoints, now searched run by
// run without being sorted).

// radixBits is the digit width of sortByRatio's passes, and radixTop the
// key bits they cover (from the top, the sign bit aside).
const (
	radixBits = 11
	radixTop  = 3 * radixBits
	// radixMin is the least token count sorted by counting passes.
	radixMin = 4096
	// radixLow is the number of key bits below the passes' digits, where a
	// sort key carries its token's index instead of ρ's low mantissa bits.
	radixLow = 63 - radixTop
)

// sortByRatio sorts s.it by ρ ascending, ties in their order of
// collection. ρ ≥ 0 is never NaN, so the IEEE-754 bits of ρ order as ρ
// does: three stable counting passes (LSD) sort by the top 33 bits below
// the sign bit (exponent and 21 mantissa bits), and an insertion pass
// orders the tokens those bits leave tied, which are few (their ρ agree to
// 2^-21 relative), so the pass is linear in practice.
//
// The passes move 8-byte keys, not the 32-byte items: a key is ρ's top 34
// bits with the token's index in the 30 bits below them (radixLow), one
// read counts all three digits, and the items are gathered in key order
// once at the end (a quarter of the bytes moved, which were most of the
// sort's time). Keys tied in the top bits keep the index order, so the
// result is the same permutation as sorting the items themselves.
func (s *mscratch) sortByRatio() {
	n := len(s.it)
	if n < radixMin || n > 1<<radixLow {
		// the counting passes' fixed cost (3·2,048 counters) exceeds a
		// comparison sort's below radixMin tokens
		slices.SortFunc(s.it, func(x, y item) int { return cmp.Compare(x.r, y.r) })
		return
	}
	keys := s.orderKeys()
	if cap(s.tmp) < n {
		s.tmp = make([]item, n)
	}
	sorted := s.tmp[:n]
	for i, k := range keys {
		sorted[i] = s.it[k&(1<<radixLow-1)]
	}
	s.it, s.tmp = sorted, s.it
}

// orderKeys returns the keys of s.it in the order of a stable sort by ρ:
// the counting passes' order, then an insertion pass by the full ρ for the
// keys the passes left tied (reading ρ from s.it by the key's index).
func (s *mscratch) orderKeys() []uint64 {
	keys := s.sortKeys()
	prev := s.it[keys[0]&(1<<radixLow-1)].r // the largest ρ in keys[:i]
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		r := s.it[k&(1<<radixLow-1)].r
		if !(prev > r) {
			prev = r
			continue
		}
		j := i
		for ; j > 0 && s.it[keys[j-1]&(1<<radixLow-1)].r > r; j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = k
	}
	return keys
}

// indexSorted is index's sort and prefix sums in one pass: the items are
// gathered in key order (sortByRatio's result) and summed as they arrive.
// It reports false, having done nothing, where sortByRatio would not use
// the counting passes.
func (s *mscratch) indexSorted() bool {
	n := len(s.it)
	if n < radixMin || n > 1<<radixLow {
		return false
	}
	keys := s.orderKeys()
	if cap(s.tmp) < n {
		s.tmp = make([]item, n)
	}
	sorted := s.tmp[:n]
	cp, cq, cc := s.cp[:n+1], s.cq[:n+1], s.cc[:n+1]
	cp[0], cq[0], cc[0] = 0, 0, 0
	var sp, sq, sc float64
	for i, k := range keys {
		v := s.it[k&(1<<radixLow-1)]
		sorted[i] = v
		sp += v.p
		sq += v.q
		sc += v.c
		cp[i+1], cq[i+1], cc[i+1] = sp, sq, sc
	}
	s.it, s.tmp = sorted, s.it
	s.z = 0 // the tokens with ρ = 0, which sort first
	for s.z < n && s.it[s.z].r == 0 {
		s.z++
	}
	return true
}

// sortKeys returns sortByRatio's keys of s.it (ρ's top bits, then the
// index) sorted by three stable counting passes on the top 33 bits.
func (s *mscratch) sortKeys() []uint64 {
	n := len(s.it)
	if cap(s.keys) < n {
		s.keys, s.ktmp = make([]uint64, n), make([]uint64, n)
	}
	src, dst := s.keys[:n], s.ktmp[:n]
	var cnt [3][1 << radixBits]uint32
	const digit = 1<<radixBits - 1
	for i, v := range s.it {
		k := math.Float64bits(v.r)&^(1<<radixLow-1) | uint64(i)
		src[i] = k
		cnt[0][(k>>radixLow)&digit]++
		cnt[1][(k>>(radixLow+radixBits))&digit]++
		cnt[2][(k>>(radixLow+2*radixBits))&digit]++
	}
	for pass := range 3 {
		c := &cnt[pass]
		sum := uint32(0)
		for i, x := range c {
			c[i] = sum
			sum += x
		}
		shift := uint(radixLow + pass*radixBits)
		for _, k := range src {
			d := (k >> shift) & digit
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	return src
}

// segment returns the breakpoints lo < hi around the root of KL(m) = d,
// given KL(mFloor) > d: the largest breakpoint with KL ≥ d and the least
// above it (mMax when there is none). The breakpoints are mFloor, q0,
// mMax, m at a = ρ_k for 0 < ρ_k ≤ 1 (the run h(k), increasing in k) and
// m at b = ρ_j for 1 ≤ ρ_j < ∞ (the run g(j), decreasing in j), those in
// [mFloor, mMax]; KL decreases in m, so each run is searched by bisection
// (O(log² V) evaluations in all) instead of sorting all of them.
func (s *mscratch) segment(d float64) (lo, hi float64) {
	lo, hi = mFloor, s.mMax
	consider := func(m float64) {
		switch {
		case !(m >= mFloor && m <= s.mMax):
		case s.eval(m).KL >= d:
			lo = max(lo, m)
		default:
			hi = min(hi, m)
		}
	}
	consider(s.q0)
	consider(s.mMax)
	n := len(s.it)
	// h's run: k = z+1 .. kEnd with ρ_{k-1} ≤ 1.
	kEnd := sort.Search(n, func(i int) bool { return s.it[i].r > 1 })
	s.searchRun(kEnd-s.z, func(i int) float64 { return s.hAt(s.z + 1 + i) }, d, consider)
	// g's run, ascending: j = jEnd-1 down to jStart, 1 ≤ ρ_j < ∞.
	jStart := sort.Search(n, func(i int) bool { return s.it[i].r >= 1 })
	jEnd := sort.Search(n, func(i int) bool { return math.IsInf(s.it[i].r, 1) })
	s.searchRun(jEnd-jStart, func(i int) float64 { return s.gAt(jEnd - 1 - i) }, d, consider)
	return lo, hi
}

// searchRun passes to consider the two values of the ascending run
// at(0..n-1) around the root: the last with KL ≥ d and the first with
// KL < d (values below mFloor count as the former, above mMax as the
// latter).
func (s *mscratch) searchRun(n int, at func(int) float64, d float64, consider func(float64)) {
	i := sort.Search(n, func(i int) bool {
		m := at(i)
		return m >= mFloor && (m > s.mMax || s.eval(m).KL < d)
	})
	if i > 0 {
		consider(at(i - 1))
	}
	if i < n {
		consider(at(i))
	}
}
