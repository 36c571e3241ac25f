package algos

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/specsim/specsim/sim"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// TreeOptimumConfig names the drafter whose depth-d optimum
// OptimalTreeAccepted computes.
type TreeOptimumConfig struct {
	// Draft is the drafter kind: sim.DraftIID (K chains drawn i.i.d. from
	// q and merged into a trie, draft.IID), sim.DraftWOR (Branch[i]
	// children without replacement at depth i, draft.WOR) or sim.DraftTopK
	// (the Branch[i] most likely tokens of q, draft.TopK).
	Draft sim.DraftKind
	// K is the number of chains (iid) and, with Branch nil, the children
	// of the root (wor, topk: Branch = K, 1, ..., 1 as the drafters').
	K     int
	Depth int
	// Branch is the children per depth (wor, topk); nil as above.
	Branch []int
	// Context is the prefix before the step.
	Context []int
}

// Limits of OptimalTreeAccepted: the columns of one coupling LP (one per
// token of each draft set, and a slack per set and token) and the number
// of LPs of a run (one per distinct node state).
const (
	MaxTreeOptimumColumns = 4096
	MaxTreeOptimumNodes   = 20000
	// MaxTreeOptimumCells bounds the LPs' rows × columns summed over a
	// run's node states, the dense simplex's work per pivot.
	MaxTreeOptimumCells = 1 << 22
)

// OptimalTreeAccepted returns V_d, the largest E[accepted tokens] of one
// verification step of a depth-d draft tree over the lossless verifiers
// that decide at each node from that node's draft set (the multiset of its
// children), for the target p and the drafter of cfg, by backward
// induction over the tree:
//
//	V_0(s) = 0,
//	V_i(s) = max_π Σ_S Σ_{y ∈ S} π(y, S) (1 + V_{i-1}(s·y)),
//
// the maximum over couplings π of Y ~ p(·|ctx) and the node's draft set S
// (its law under the drafter), solved by the simplex method
// (gonum/optimize/convex/lp). The state s is the node's context (and, for
// i.i.d. chains, how many chains pass through it: the children of a node
// that c chains reach are c i.i.d. draws, and a child drawn m times has m
// chains below it).
//
// Why the recursion is the optimum of that class. Below a node the
// drafter draws each child's subtree independently of the node's other
// children given the child's token (and chain count). A node-wise verifier
// picks the output Y at the node from S and the context only, so given
// Y = y ∈ S the subtree of y keeps its law, and what the step accepts
// below y depends only on that subtree and the verifier there: its
// expectation is at most V_{i-1}(s·y), attained by the optimal verifier of
// y's subtree whatever was done above. Losslessness at the node is exactly
// the marginal constraint Y ~ p(·|ctx) (the continuation below y is
// lossless for p(·|ctx·y) by induction). So E[accepted] = Σ π(y, S)(1 +
// E[accepted below y]) ≤ the LP's value, and the LP's optimal coupling,
// used at every node, attains it.
//
// It is not a bound over every lossless verifier: one that looks ahead
// (chooses Y at a node from the subtrees too) can do better. On a single
// chain (K = 1) V_d is token verification's E[accepted] (with one draft
// the LP keeps min(p, q) on the diagonal whatever the weights), which
// block verification (Sun et al. 2024, arXiv 2403.10444) and traversal
// verification exceed. Its tests compare it with the node-wise tree rules
// (those verifying by walkAccept/walkLaw) only.
//
// Sizes: an LP of more than MaxTreeOptimumColumns columns, or a run of
// more than MaxTreeOptimumNodes node states or MaxTreeOptimumCells LP
// cells, is refused with the reason.
func OptimalTreeAccepted(pair sim.Pair, cfg TreeOptimumConfig) (float64, error) {
	return optimalTreeAccepted(pair, cfg, MaxTreeOptimumCells)
}

// optimalTreeAccepted is OptimalTreeAccepted refusing past maxCells LP
// cells.
func optimalTreeAccepted(pair sim.Pair, cfg TreeOptimumConfig, maxCells int) (float64, error) {
	o, err := newTreeOpt(pair, cfg)
	if err != nil {
		return 0, err
	}
	o.maxCells = maxCells
	root := cfg.K
	if cfg.Draft != sim.DraftIID {
		root = 0
	}
	return o.value(append([]int(nil), cfg.Context...), 0, root)
}

// treeOpt holds one run of OptimalTreeAccepted: the models, the children
// per depth (wor, topk) and the values of the node states met so far.
type treeOpt struct {
	pair   sim.Pair
	kind   sim.DraftKind
	depth  int
	branch []int
	memo   map[string]float64
	cells  int
	// maxCells is the run's limit on LP cells.
	maxCells int
}

// charge adds one node state's LP (its sets over V tokens) to the run's
// cells and refuses past MaxTreeOptimumCells.
func (o *treeOpt) charge(ns, v int, sets [][]int) error {
	cols := ns + v
	for _, s := range sets {
		cols += len(s)
	}
	o.cells += (ns + v) * cols
	if o.cells > o.maxCells {
		return fmt.Errorf("depth-d optimum: the coupling LPs of %d node states exceed %d cells (rows × columns); use a smaller V, k or depth", len(o.memo)+1, o.maxCells)
	}
	return nil
}

// newTreeOpt validates cfg.
func newTreeOpt(pair sim.Pair, cfg TreeOptimumConfig) (*treeOpt, error) {
	o := &treeOpt{pair: pair, kind: cfg.Draft, depth: cfg.Depth, memo: map[string]float64{}}
	switch {
	case cfg.Depth < 1 || cfg.Depth > sim.MaxTreeDepth:
		return nil, fmt.Errorf("depth = %d; use 1 <= depth <= %d", cfg.Depth, sim.MaxTreeDepth)
	case cfg.K < 1 || cfg.K > 64:
		return nil, fmt.Errorf("k = %d; use 1 <= k <= 64", cfg.K)
	case pair.P == nil || pair.Q == nil:
		return nil, fmt.Errorf("depth-d optimum: no model pair")
	}
	switch cfg.Draft {
	case sim.DraftIID:
		if cfg.Branch != nil {
			return nil, fmt.Errorf("branch: the iid drafter draws k chains and takes no children per depth; leave it out")
		}
	case sim.DraftWOR, sim.DraftTopK:
		o.branch = cfg.Branch
		if o.branch == nil {
			o.branch = make([]int, cfg.Depth)
			for i := range o.branch {
				o.branch[i] = 1
			}
			o.branch[0] = cfg.K
		}
		if len(o.branch) != cfg.Depth {
			return nil, fmt.Errorf("branch has %d entries for depth %d; give one per depth", len(o.branch), cfg.Depth)
		}
	default:
		return nil, fmt.Errorf("draft %s: the depth-d optimum takes iid, wor or topk drafts", cfg.Draft)
	}
	return o, nil
}

// value is V at a node with context ctx at depth i (c chains reach it
// for iid drafts).
func (o *treeOpt) value(ctx []int, i, c int) (float64, error) {
	if i == o.depth {
		return 0, nil
	}
	key := optKey(ctx, i, c)
	if v, ok := o.memo[key]; ok {
		return v, nil
	}
	if len(o.memo) >= MaxTreeOptimumNodes {
		return 0, fmt.Errorf("depth-d optimum: more than %d node states to solve; use a smaller V, k or depth", MaxTreeOptimumNodes)
	}
	v := o.pair.P.Vocab()
	p, q := make([]float64, v), make([]float64, v)
	o.pair.P.Next(ctx, p)
	o.pair.Q.Next(ctx, q)
	sim.Normalize(p)
	sim.Normalize(q)
	sets, probs, err := o.setLaw(q, i, c)
	if err != nil {
		return 0, err
	}
	if err := o.charge(len(sets), v, sets); err != nil {
		return 0, err
	}
	w := make([][]float64, len(sets))
	for s, set := range sets {
		w[s] = make([]float64, len(set))
		for j, y := range set {
			sub, err := o.value(append(ctx, y), i+1, o.mult(set, y))
			if err != nil {
				return 0, err
			}
			w[s][j] = 1 + sub
		}
	}
	val, err := WeightedCouplingLP(p, sets, probs, w)
	if err != nil {
		return 0, err
	}
	o.memo[key] = val
	return val, nil
}

// mult is the number of chains below child y of a node with draft set
// set (iid: the multiplicity of y); 0 for the other kinds.
func (o *treeOpt) mult(set []int, y int) int {
	if o.kind != sim.DraftIID {
		return 0
	}
	m := 0
	for _, x := range set {
		if x == y {
			m++
		}
	}
	return m
}

// optKey keys a node state.
func optKey(ctx []int, i, c int) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(i))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(c))
	for _, y := range ctx {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(y))
	}
	return b.String()
}

// setLaw is the law of a node's draft set at depth i: for iid, the
// multisets of c i.i.d. draws (each token once per draw, sorted); for
// wor, the sets of Branch[i] draws without replacement (DraftSetLaw); for
// topk, the one set of the Branch[i] most likely tokens.
func (o *treeOpt) setLaw(q []float64, i, c int) ([][]int, []float64, error) {
	switch o.kind {
	case sim.DraftIID:
		return multisetLaw(q, c)
	case sim.DraftWOR:
		return DraftSetLaw(q, min(o.branch[i], sim.Support(q)), false)
	default:
		return [][]int{sim.TopTokens(nil, q, o.branch[i])}, []float64{1}, nil
	}
}

// multisetLaw returns the law of the multiset of c i.i.d. draws from q
// (sorted token lists with repeats; the multinomial probabilities).
func multisetLaw(q []float64, c int) ([][]int, []float64, error) {
	var sup []int
	for x, v := range q {
		if v > 0 {
			sup = append(sup, x)
		}
	}
	if n := binom(len(sup)+c-1, c); n*float64(c+1) > MaxTreeOptimumColumns {
		return nil, nil, fmt.Errorf("depth-d optimum: %.0f draft multisets of %d draws over a support of %d exceed the LP's %d columns; use a smaller V or k", n, c, len(sup), MaxTreeOptimumColumns)
	}
	var sets [][]int
	var probs []float64
	var rec func(from int, set []int, pr float64)
	rec = func(from int, set []int, pr float64) {
		if len(set) == c {
			sets, probs = append(sets, append([]int(nil), set...)), append(probs, pr)
			return
		}
		for j := from; j < len(sup); j++ {
			// the multinomial weight, built one draw at a time: n!/Π m! Π q^m
			m := 1
			for l := len(set) - 1; l >= 0 && set[l] == sup[j]; l-- {
				m++
			}
			rec(j, append(set, sup[j]), pr*q[sup[j]]*float64(len(set)+1)/float64(m))
		}
	}
	rec(0, nil, 1)
	return sets, probs, nil
}

// WeightedCouplingLP solves, by the simplex method, the coupling problem
// over π(S, y) ≥ 0 for every draft set S of the law (sets, probs) and
// every token y, with Σ_y π(S, y) = Pr(S) and Σ_S π(S, y) = p(y): the
// maximum of Σ_S Σ_j π(S, sets[S][j]) w[S][j] (a token repeated in a set
// counts once, with its first weight; weights ≥ 0). With every weight 1 it
// is α* for the set law. Only the pairs y ∈ S earn, so the LP keeps those
// columns, with Σ_{y∈S} π(S, y) ≤ Pr(S) and Σ_S π(S, y) ≤ p(y) (slack
// columns make them equalities): any such partial plan extends to a
// coupling, since what is left of the sets' and the tokens' masses is
// equal, and the extension earns no less (weights ≥ 0).
func WeightedCouplingLP(p []float64, sets [][]int, probs []float64, w [][]float64) (float64, error) {
	v, ns := len(p), len(sets)
	type pair struct{ s, y int }
	var cols []pair
	var gain []float64
	for i, set := range sets {
		for j, y := range set {
			if j > 0 && slices.Contains(set[:j], y) {
				continue
			}
			cols, gain = append(cols, pair{i, y}), append(gain, w[i][j])
		}
	}
	n := len(cols) + ns + v
	if n > MaxTreeOptimumColumns {
		return 0, fmt.Errorf("coupling LP: %d columns for %d draft sets over V = %d exceed %d; use a smaller V or k", n, ns, v, MaxTreeOptimumColumns)
	}
	a := mat.NewDense(ns+v, n, nil)
	b := make([]float64, ns+v)
	c := make([]float64, n)
	for j, pc := range cols {
		a.Set(pc.s, j, 1)
		a.Set(ns+pc.y, j, 1)
		c[j] = -gain[j]
	}
	for r := range ns + v {
		a.Set(r, len(cols)+r, 1) // slack
	}
	copy(b, probs)
	copy(b[ns:], p)
	opt, _, err := lp.Simplex(c, a, b, 1e-12, nil)
	if err != nil {
		return 0, fmt.Errorf("coupling LP: %w", err)
	}
	return -opt, nil
}
