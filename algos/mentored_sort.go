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
)

// sortByRatio sorts s.it by ρ ascending, ties in their order of
// collection. ρ ≥ 0 is never NaN, so the IEEE-754 bits of ρ order as ρ
// does: three stable counting passes (LSD) sort by the top 33 bits below
// the sign bit (exponent and 21 mantissa bits), and an insertion pass
// orders the tokens those bits leave tied, which are few (their ρ agree to
// 2^-21 relative), so the pass is linear in practice.
func (s *mscratch) sortByRatio() {
	n := len(s.it)
	if n < radixMin {
		// the counting passes' fixed cost (3·2,048 counters) exceeds a
		// comparison sort's below radixMin tokens
		slices.SortFunc(s.it, func(x, y item) int { return cmp.Compare(x.r, y.r) })
		return
	}
	if cap(s.tmp) < n {
		s.tmp = make([]item, n)
	}
	src, dst := s.it, s.tmp[:n]
	for pass := range 3 {
		shift := uint(63 - radixTop + pass*radixBits)
		var cnt [1 << radixBits]int
		for _, v := range src {
			cnt[(math.Float64bits(v.r)>>shift)&(1<<radixBits-1)]++
		}
		sum := 0
		for i, c := range cnt {
			cnt[i] = sum
			sum += c
		}
		for _, v := range src {
			d := (math.Float64bits(v.r) >> shift) & (1<<radixBits - 1)
			dst[cnt[d]] = v
			cnt[d]++
		}
		src, dst = dst, src
	}
	// After an odd number of passes the sorted tokens are in s.tmp: swap
	// the buffers so that s.it holds them.
	s.it, s.tmp = src, dst
	for i := 1; i < n; i++ {
		v := s.it[i]
		j := i
		for ; j > 0 && s.it[j-1].r > v.r; j-- {
			s.it[j] = s.it[j-1]
		}
		s.it[j] = v
	}
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
