package algos

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/specsim/specsim/sim"
)

// The optimal multi-draft acceptance (docs/rules.md, "Tree (multi-draft)
// rules"; Hu et al., arXiv 2502.18779). At one position a drafter proposes a random set S of tokens with law Q; a valid
// verifier emits Y ~ p exactly; its acceptance is Pr(Y ∈ S). The best
// achievable acceptance is the value of a transport problem (SpecTr's
// OTM, Sun et al. arXiv 2310.15141) and, by max-flow/min-cut (Hu et al.,
// arXiv 2502.18779, §3),
//
//	α*(p, Q) = min over A ⊆ V of [ 1 - p(A) + Pr_Q(S ∩ A ≠ ∅) ].
//
// For k i.i.d. drafts Pr(S ∩ A ≠ ∅) = 1 - (1 - q(A))^k; for k draws
// without replacement (sequential, renormalising after each draw; at most
// |supp q| draws) Pr(S ∩ A ≠ ∅) = 1 - Pr(S ⊆ V \ A). k = 1 gives
// Σ min(p, q) for both.

// MaxExhaustiveV is the largest vocabulary OptimalAcceptanceExhaustive
// searches (2^V subsets).
const MaxExhaustiveV = 20

// maxFlowSets bounds the number of distinct draft sets the max-flow builds.
const maxFlowSets = 1 << 21

func checkBound(p, q []float64, k int) error {
	if err := sim.ValidatePair(p, q); err != nil {
		return err
	}
	if k < 1 || k > 64 {
		return fmt.Errorf("bound: k = %d; use 1 <= k <= 64 drafts", k)
	}
	return nil
}

// OptimalAcceptance returns α* for k drafts from q (with or without
// replacement) against target p: by exhaustive search over token sets for
// V ≤ MaxExhaustiveV, otherwise by max-flow over the draft sets.
func OptimalAcceptance(p, q []float64, k int, replacement bool) (float64, error) {
	if len(p) <= MaxExhaustiveV {
		return OptimalAcceptanceExhaustive(p, q, k, replacement)
	}
	return OptimalAcceptanceFlow(p, q, k, replacement)
}

// OptimalAcceptanceExhaustive evaluates min_A [1 - p(A) + Pr(S ∩ A ≠ ∅)]
// over all 2^V subsets A (V ≤ 20). Without replacement Pr(S ⊆ B) comes
// from the law of the drawn set, f(T) = Σ_{x∈T} f(T\x)·q(x)/(1 - q(T\x)),
// summed over subsets by a zeta transform. Time O(2^V·V).
func OptimalAcceptanceExhaustive(p, q []float64, k int, replacement bool) (float64, error) {
	if err := checkBound(p, q, k); err != nil {
		return 0, err
	}
	v := len(p)
	if v > MaxExhaustiveV {
		return 0, fmt.Errorf("bound: V = %d is too large for the exhaustive search (V <= %d); use the max-flow", v, MaxExhaustiveV)
	}
	n := 1 << v
	pA := make([]float64, n)
	qA := make([]float64, n)
	for m := 1; m < n; m++ {
		i := bits.TrailingZeros(uint(m))
		pA[m] = pA[m&(m-1)] + p[i]
		qA[m] = qA[m&(m-1)] + q[i]
	}
	full := n - 1
	var inB []float64 // Pr(S ⊆ B), without replacement
	if !replacement {
		m := min(k, sim.Support(q))
		f := make([]float64, n)
		f[0] = 1
		for t := 1; t < n; t++ {
			c := bits.OnesCount(uint(t))
			if c > m {
				continue
			}
			s := 0.0
			for r := t; r != 0; r &= r - 1 {
				i := bits.TrailingZeros(uint(r))
				if q[i] <= 0 {
					continue
				}
				prev := t &^ (1 << i)
				if den := 1 - qA[prev]; den > 0 {
					s += f[prev] * q[i] / den
				}
			}
			f[t] = s
		}
		for t := range f {
			if bits.OnesCount(uint(t)) != m {
				f[t] = 0
			}
		}
		for i := 0; i < v; i++ {
			for t := 0; t < n; t++ {
				if t&(1<<i) != 0 {
					f[t] += f[t^(1<<i)]
				}
			}
		}
		inB = f
	}
	best := math.Inf(1)
	for a := 0; a < n; a++ {
		var meet float64
		if replacement {
			meet = 1 - math.Pow(math.Max(0, 1-qA[a]), float64(k))
		} else {
			meet = 1 - inB[full&^a]
		}
		best = math.Min(best, 1-pA[a]+meet)
	}
	return math.Max(0, math.Min(1, best)), nil
}

// DraftSetLaw returns the law of the set S of distinct drafted tokens for
// k drafts from q, with or without replacement, as parallel slices of sets
// (sorted token lists) and probabilities. With replacement
// Pr(S = T) = Σ_{U⊆T} (-1)^{|T|-|U|} q(U)^k; without replacement it is
// f(T) above. It needs |supp q| ≤ 64 and at most 2^21 sets.
func DraftSetLaw(q []float64, k int, replacement bool) ([][]int, []float64, error) {
	var sup []int
	for x, v := range q {
		if v > 0 {
			sup = append(sup, x)
		}
	}
	s := len(sup)
	if s > 64 {
		return nil, nil, fmt.Errorf("bound: the draft has %d tokens with q > 0; the set law handles at most 64", s)
	}
	m := k
	if !replacement {
		m = min(k, s)
	}
	m = min(m, s)
	count := 0.0
	for j := 1; j <= m; j++ {
		count += binom(s, j)
	}
	if count > maxFlowSets {
		return nil, nil, fmt.Errorf("bound: %g draft sets (support %d, k = %d) are too many for the max-flow; use a smaller vocabulary or k", count, s, k)
	}
	var sets [][]int
	var probs []float64
	emit := func(mask uint64, pr float64) {
		if pr <= 0 {
			return
		}
		var set []int
		for r := mask; r != 0; r &= r - 1 {
			set = append(set, sup[bits.TrailingZeros64(r)])
		}
		sets = append(sets, set)
		probs = append(probs, pr)
	}
	qs := func(mask uint64) float64 {
		t := 0.0
		for r := mask; r != 0; r &= r - 1 {
			t += q[sup[bits.TrailingZeros64(r)]]
		}
		return t
	}
	if replacement {
		forSubsets(s, m, func(mask uint64) {
			pr := 0.0
			c := bits.OnesCount64(mask)
			for u := mask; ; u = (u - 1) & mask {
				sign := 1.0
				if (c-bits.OnesCount64(u))%2 == 1 {
					sign = -1
				}
				pr += sign * math.Pow(qs(u), float64(k))
				if u == 0 {
					break
				}
			}
			emit(mask, pr)
		})
		return sets, probs, nil
	}
	level := map[uint64]float64{0: 1}
	for j := 1; j <= m; j++ {
		next := map[uint64]float64{}
		keys := make([]uint64, 0, len(level))
		for t := range level {
			keys = append(keys, t)
		}
		sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
		for _, t := range keys {
			ft := level[t]
			den := 1 - qs(t)
			if !(den > 0) {
				continue
			}
			for i := 0; i < s; i++ {
				if t&(1<<i) == 0 {
					next[t|1<<i] += ft * q[sup[i]] / den
				}
			}
		}
		level = next
	}
	keys := make([]uint64, 0, len(level))
	for t := range level {
		keys = append(keys, t)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	for _, t := range keys {
		emit(t, level[t])
	}
	return sets, probs, nil
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 0; i < k; i++ {
		r = r * float64(n-i) / float64(i+1)
	}
	return r
}

// forSubsets calls fn for every non-empty subset of {0..s-1} of size ≤ m.
func forSubsets(s, m int, fn func(uint64)) {
	var rec func(start int, mask uint64, size int)
	rec = func(start int, mask uint64, size int) {
		if size > 0 {
			fn(mask)
		}
		if size == m {
			return
		}
		for i := start; i < s; i++ {
			rec(i+1, mask|1<<i, size+1)
		}
	}
	rec(0, 0, 0)
}

// OptimalAcceptanceFlow computes α* for k drafts from q as the maximum
// flow of the network source → T (capacity Pr(S = T)) → x ∈ T (unbounded)
// → sink (capacity p(x)): the value of the optimal coupling of Y ~ p with
// the draft set (Hu et al. §3). It works for any V as long as the draft
// set law has at most 2^21 sets.
func OptimalAcceptanceFlow(p, q []float64, k int, replacement bool) (float64, error) {
	if err := checkBound(p, q, k); err != nil {
		return 0, err
	}
	sets, probs, err := DraftSetLaw(q, k, replacement)
	if err != nil {
		return 0, err
	}
	return OptimalAcceptanceSets(p, sets, probs), nil
}

// OptimalAcceptanceSets returns the max-flow value α* for target p and a
// draft set law given as sets (token lists) with probabilities: the best
// Pr(Y ∈ S) over couplings of Y ~ p with S. Use it for draft laws other
// than i.i.d. or without replacement (greedy drafts, top-k sets).
func OptimalAcceptanceSets(p []float64, sets [][]int, probs []float64) float64 {
	v := len(p)
	ns := len(sets)
	// Nodes: 0 source, 1 sink, 2..2+ns-1 sets, then tokens.
	g := newFlow(2 + ns + v)
	for i, s := range sets {
		g.add(0, 2+i, probs[i])
		for _, x := range s {
			g.add(2+i, 2+ns+x, math.Inf(1))
		}
	}
	for x, px := range p {
		if px > 0 {
			g.add(2+ns+x, 1, px)
		}
	}
	return math.Max(0, math.Min(1, g.maxflow(0, 1)))
}

// flow is Dinic's max-flow on float capacities (Dinic 1970).
type flow struct {
	head       []int
	to, next   []int
	cap        []float64
	level, cur []int
}

func newFlow(n int) *flow {
	f := &flow{head: make([]int, n), level: make([]int, n), cur: make([]int, n)}
	for i := range f.head {
		f.head[i] = -1
	}
	return f
}

func (f *flow) add(u, w int, c float64) {
	f.to = append(f.to, w, u)
	f.cap = append(f.cap, c, 0)
	f.next = append(f.next, f.head[u], f.head[w])
	f.head[u] = len(f.to) - 2
	f.head[w] = len(f.to) - 1
}

const flowEps = 1e-15

func (f *flow) bfs(s, t int) bool {
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[s] = 0
	queue := []int{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for e := f.head[u]; e >= 0; e = f.next[e] {
			if f.cap[e] > flowEps && f.level[f.to[e]] < 0 {
				f.level[f.to[e]] = f.level[u] + 1
				queue = append(queue, f.to[e])
			}
		}
	}
	return f.level[t] >= 0
}

func (f *flow) dfs(u, t int, push float64) float64 {
	if u == t {
		return push
	}
	for ; f.cur[u] >= 0; f.cur[u] = f.next[f.cur[u]] {
		e := f.cur[u]
		w := f.to[e]
		if f.cap[e] > flowEps && f.level[w] == f.level[u]+1 {
			if d := f.dfs(w, t, math.Min(push, f.cap[e])); d > 0 {
				f.cap[e] -= d
				f.cap[e^1] += d
				return d
			}
		}
	}
	return 0
}

func (f *flow) maxflow(s, t int) float64 {
	total := 0.0
	for f.bfs(s, t) {
		copy(f.cur, f.head)
		for {
			d := f.dfs(s, t, math.Inf(1))
			if d <= 0 {
				break
			}
			total += d
		}
	}
	return total
}

// GreedyDraftSetLaw returns the law of the draft set of Hu et al.'s greedy
// drafts (sim.DraftGreedy with k children): the top k-1 tokens D of q
// (among q > 0, ties to the lowest index) plus one token x drawn from q
// restricted to V \ D, so Pr(S = D ∪ {x}) = q(x)/(1 - q(D)).
func GreedyDraftSetLaw(q []float64, k int) ([][]int, []float64) {
	sup := sim.Support(q)
	top := sim.TopTokens(nil, q, min(k-1, sup-1))
	rest := 1.0
	in := map[int]bool{}
	for _, x := range top {
		rest -= q[x]
		in[x] = true
	}
	var sets [][]int
	var probs []float64
	for x, qx := range q {
		if qx > 0 && !in[x] {
			sets = append(sets, append(append([]int(nil), top...), x))
			probs = append(probs, qx/rest)
		}
	}
	return sets, probs
}

// DrafterSetLaw returns the law of the set of distinct tokens a drafter
// proposes at the root after ctx, by enumerating its trees (Enumerate):
// the draft set law of any drafter, for OptimalAcceptanceSets. Give it a
// drafter of depth 1, or it enumerates whole trees (and merges those with
// the same root set). It is exact and costs what the drafter's
// enumeration costs.
func DrafterSetLaw(d sim.Drafter, ctx []int) ([][]int, []float64, error) {
	index := map[string]int{}
	var sets [][]int
	var probs []float64
	err := d.Enumerate(ctx, func(t *sim.Tree, w float64) error {
		set := make([]int, 0, len(t.Nodes[0].Kids))
		for _, c := range t.Nodes[0].Kids {
			set = append(set, t.Nodes[c].Token)
		}
		slices.Sort(set)
		key := fmt.Sprint(set)
		i, ok := index[key]
		if !ok {
			i = len(sets)
			index[key] = i
			sets, probs = append(sets, set), append(probs, 0)
		}
		probs[i] += w
		return nil
	})
	return sets, probs, err
}
