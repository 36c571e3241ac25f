package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"gonum.org/v1/gonum/floats"
)

// Limits of a draft tree.
const (
	// MaxTreeDepth is the deepest node a Tree may hold.
	MaxTreeDepth = 16
	// MaxTreeNodes bounds the number of nodes (root included).
	MaxTreeNodes = 1 << 12
)

// Node is one node of a draft Tree. Node 0 is the root: the position right
// after the context, with Token = NoToken, Parent = -1 and Depth = 0.
type Node struct {
	// Token is the drafted token this node appends to its parent's path.
	Token int
	// Parent is the parent node's index (-1 for the root).
	Parent int
	// Depth is the path length from the root (root 0).
	Depth int
	// Kids are the distinct child nodes in order of first draw.
	Kids []int
	// Draws are the child nodes in draw order. They equal Kids except for
	// i.i.d. drafts with replacement, where a token drawn twice appears
	// twice (the multiset of draws matters to the verifiers).
	Draws []int
	// Q is the draft row the children were drawn from, q(.|path); it is
	// the zero Row when the children were not drawn from a law (fixed
	// candidate lists) and for leaves.
	Q Row
	// P is the target row p(.|path), for every node: the bonus row at a
	// leaf.
	P Row
}

// Tree is one speculative step with several draft candidates: a token
// tree rooted after the context. A single chain of γ tokens is the tree
// whose nodes each have one child. Cands lists the candidates (the
// drafter's root-to-node paths, in candidate order) by their end node; two
// identical i.i.d. chains share a node and appear twice.
//
// A Tree owns the storage of its rows; Reset reuses it, so drafting into
// the same Tree again does not allocate once it has grown.
type Tree struct {
	V     int
	Nodes []Node
	Cands []int
	// Ctx is the index of the source context the tree was drafted in (a
	// pool's context, as Block.Ctx; run.CycleTrees sets it), or -1 when
	// the source has none (Reset sets -1).
	Ctx int

	// DrafterState is the working storage of the drafter that last drafted
	// into the tree (nil at first): a drafter keeps a value of its own type
	// here, replacing whatever else it finds, so it stays safe for
	// concurrent Draft on distinct trees and does not allocate once the
	// tree has grown.
	DrafterState any

	pbuf, qbuf [][]float64
	scratch    [][]float64
	path       []int
}

// Reset empties t for a vocabulary of v tokens, keeping only the root.
func (t *Tree) Reset(v int) {
	t.V = v
	t.Ctx = -1
	for i := range t.Nodes {
		t.Nodes[i].Kids = t.Nodes[i].Kids[:0]
		t.Nodes[i].Draws = t.Nodes[i].Draws[:0]
	}
	t.Nodes = t.Nodes[:0]
	t.Cands = t.Cands[:0]
	t.newNode(NoToken, -1)
}

func (t *Tree) newNode(tok, parent int) int {
	i := len(t.Nodes)
	if i == MaxTreeNodes {
		panic("sim: tree exceeds MaxTreeNodes")
	}
	if cap(t.Nodes) > i {
		t.Nodes = t.Nodes[:i+1]
	} else {
		t.Nodes = append(t.Nodes, Node{})
	}
	n := &t.Nodes[i]
	n.Token, n.Parent = tok, parent
	n.Depth = 0
	if parent >= 0 {
		n.Depth = t.Nodes[parent].Depth + 1
	}
	n.Kids, n.Draws = n.Kids[:0], n.Draws[:0]
	n.Q, n.P = Row{}, Row{}
	for len(t.pbuf) <= i {
		t.pbuf = append(t.pbuf, nil)
		t.qbuf = append(t.qbuf, nil)
	}
	t.pbuf[i] = grow(t.pbuf[i], t.V)
	return i
}

// Child returns the child of node n carrying token tok, or -1.
func (t *Tree) Child(n, tok int) int {
	for _, c := range t.Nodes[n].Kids {
		if t.Nodes[c].Token == tok {
			return c
		}
	}
	return -1
}

// AddDraw records a draw of token tok at node n and returns the child node
// carrying it, creating the child if tok was not drawn there before.
func (t *Tree) AddDraw(n, tok int) int {
	c := t.Child(n, tok)
	if c < 0 {
		if t.Nodes[n].Depth+1 > MaxTreeDepth {
			panic("sim: tree exceeds MaxTreeDepth")
		}
		c = t.newNode(tok, n)
		t.Nodes[n].Kids = append(t.Nodes[n].Kids, c)
	}
	t.Nodes[n].Draws = append(t.Nodes[n].Draws, c)
	return c
}

// UndoDraw removes the last draw at node n; created says whether that draw
// created its child (which must then be the last node). Enumerators use it
// to backtrack.
func (t *Tree) UndoDraw(n int, created bool) {
	nd := &t.Nodes[n]
	nd.Draws = nd.Draws[:len(nd.Draws)-1]
	if created {
		nd.Kids = nd.Kids[:len(nd.Kids)-1]
		t.Nodes = t.Nodes[:len(t.Nodes)-1]
	}
}

// QRow returns the tree's own storage for the draft row of node n, of
// length V, and points Nodes[n].Q at it: the drafter writes q(.|path to n)
// into it. The storage is reused when the tree is drafted again.
func (t *Tree) QRow(n int) []float64 {
	t.qbuf[n] = grow(t.qbuf[n], t.V)
	t.Nodes[n].Q = F64(t.qbuf[n])
	return t.qbuf[n]
}

// SetQ points node n's draft row at r, a row the caller lends (a
// RowViewer's): the tree does not copy it, and nothing may modify it while
// the tree is in use.
func (t *Tree) SetQ(n int, r Row) { t.Nodes[n].Q = r }

// RowViewer is implemented by models that store their next-token rows
// (Markov chains, a pool's positional rows): RowView returns the row after
// ctx, the one Next would copy, without copying it. The caller must not
// modify it. Drafting trees over such models copies no rows.
type RowViewer interface {
	RowView(ctx []int) Row
}

// Path appends the tokens from the root to node n to dst and returns it.
func (t *Tree) Path(dst []int, n int) []int {
	d := t.Nodes[n].Depth
	start := len(dst)
	for range d {
		dst = append(dst, 0)
	}
	for i := start + d - 1; n > 0; i-- {
		dst[i] = t.Nodes[n].Token
		n = t.Nodes[n].Parent
	}
	return dst
}

// MaxDepth returns the depth of the deepest node.
func (t *Tree) MaxDepth() int {
	d := 0
	for i := range t.Nodes {
		d = max(d, t.Nodes[i].Depth)
	}
	return d
}

// FillTarget writes p(.|ctx, path) of the target model m into every
// node's P row (a model that stores its rows, a RowViewer, lends them
// instead of having them copied). The tree takes m's vocabulary (a fixed candidate list does
// not know V before).
func (t *Tree) FillTarget(m Model, ctx []int) {
	t.resizeV(m.Vocab())
	rv, view := m.(RowViewer)
	for i := range t.Nodes {
		t.path = t.Path(append(t.path[:0], ctx...), i)
		if view {
			t.Nodes[i].P = rv.RowView(t.path)
			continue
		}
		m.Next(t.path, t.pbuf[i])
		t.Nodes[i].P = F64(t.pbuf[i])
	}
}

// Scratch returns the i-th scratch vector of length V owned by t (for
// verifiers' residuals; contents are unspecified).
func (t *Tree) Scratch(i int) []float64 {
	for len(t.scratch) <= i {
		t.scratch = append(t.scratch, nil)
	}
	t.scratch[i] = grow(t.scratch[i], t.V)
	return t.scratch[i]
}

// Check validates t: rows of length V on every node, P on every node, Q on
// every node whose children were drawn from a law, drawn tokens in range
// with q > 0 where Q is present, and candidates naming existing nodes.
func (t *Tree) Check() error {
	if len(t.Nodes) == 0 || t.Nodes[0].Parent != -1 {
		return fmt.Errorf("tree: no root; call Reset first")
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.P.Len() != t.V {
			return fmt.Errorf("tree: node %d has a target row of %d entries, want V = %d (call FillTarget)", i, n.P.Len(), t.V)
		}
		if !n.Q.IsZero() && n.Q.Len() != t.V {
			return fmt.Errorf("tree: node %d has a draft row of %d entries, want V = %d", i, n.Q.Len(), t.V)
		}
		for _, c := range n.Draws {
			x := t.Nodes[c].Token
			if x < 0 || x >= t.V {
				return fmt.Errorf("tree: node %d carries token %d outside the vocabulary [0, %d)", c, x, t.V)
			}
			if !n.Q.IsZero() && n.Q.At(x) <= 0 {
				return fmt.Errorf("tree: token %d drafted at node %d has q = 0: it cannot have been drawn from q", x, i)
			}
		}
	}
	for _, c := range t.Cands {
		if c < 0 || c >= len(t.Nodes) {
			return fmt.Errorf("tree: candidate end node %d does not exist", c)
		}
	}
	return nil
}

// TreeOutcome is the result of verifying a Tree: the tokens on the path
// from the root to Node are accepted, then Next is emitted.
type TreeOutcome struct {
	Node int
	Next int
}

// TreeAlgorithm verifies a draft tree. AcceptTree must not modify t other
// than through t.Scratch, must draw all its randomness from rng, and is
// safe for concurrent use on distinct trees and rngs.
type TreeAlgorithm interface {
	AcceptTree(rng *rand.Rand, t *Tree) TreeOutcome
}

// TreeLawer is implemented by tree rules whose outcome law given a tree is
// computable exactly: TreeLaw writes Pr(Node = n, Next = t) into dst. It
// returns an error when the tree's rows leave the rule nothing to emit
// (or the law is too large to enumerate); dst is then incomplete.
type TreeLawer interface {
	TreeLaw(t *Tree, dst *TreeLaw) error
}

// TreeLaw is the exact law of a TreeOutcome given a Tree: a
// len(Nodes) × (V+1) table, column 0 being Next = NoToken.
type TreeLaw struct {
	N, V int
	P    []float64
}

// Reset sizes l for n nodes over v tokens and zeroes it.
func (l *TreeLaw) Reset(n, v int) {
	l.N, l.V = n, v
	m := n * (v + 1)
	if cap(l.P) < m {
		l.P = make([]float64, m)
	}
	l.P = l.P[:m]
	clear(l.P)
}

// At returns Pr(Node = n, Next = t).
func (l *TreeLaw) At(n, t int) float64 { return l.P[n*(l.V+1)+t+1] }

// Add adds mass to Pr(Node = n, Next = t).
func (l *TreeLaw) Add(n, t int, mass float64) { l.P[n*(l.V+1)+t+1] += mass }

// AddRow adds mass·r(t) to Pr(Node = n, Next = t) for every t.
func (l *TreeLaw) AddRow(n int, mass float64, r Row) {
	if mass == 0 {
		return
	}
	base := n*(l.V+1) + 1
	for t := 0; t < l.V; t++ {
		l.P[base+t] += mass * r.At(t)
	}
}

// AddVec adds mass·w(t)/Σw to Pr(Node = n, Next = t) for every t. A
// positive mass with Σw = 0 returns an error wrapping ErrEmptyResidual and
// adds nothing: the rule would have nothing to emit.
func (l *TreeLaw) AddVec(n int, mass float64, w []float64) error {
	if mass == 0 {
		return nil
	}
	s := 0.0
	for _, v := range w {
		s += v
	}
	if !(s > 0) {
		return fmt.Errorf("tree law: %w: emission at node %d with probability %g from an empty row", ErrEmptyResidual, n, mass)
	}
	base := n*(l.V+1) + 1
	for t, v := range w {
		if v > 0 {
			l.P[base+t] += mass * v / s
		}
	}
	return nil
}

// Total returns the sum of all entries (1 for a complete law).
func (l *TreeLaw) Total() float64 { return floats.Sum(l.P) }

// DraftKind names how a drafter chooses the children of a node.
type DraftKind int

// The draft kinds. Verifiers declare the kind they are lossless for.
const (
	// DraftIID: k chains drawn i.i.d. from q (with replacement), merged
	// into a trie; a node's Draws are the next tokens of the chains through
	// it, in chain order (SpecInfer, SpecTr, MCSD).
	DraftIID DraftKind = iota
	// DraftWOR: each node at depth i gets Branch[i] children drawn from q
	// without replacement (sequentially, equivalent to Gumbel-top-k; RSD,
	// EAGLE-1).
	DraftWOR
	// DraftTopK: each node at depth i gets the Branch[i] most likely
	// tokens of q as children, deterministically (EAGLE-2, Medusa).
	DraftTopK
	// DraftGreedy: each node at depth i gets the top Branch[i]-1 tokens of
	// q and one token drawn from q restricted to the rest (Hu et al.,
	// arXiv 2502.18779).
	DraftGreedy
	// DraftFixed: a fixed list of candidate sequences with no draft
	// probabilities (the fms-extras MLP speculator).
	DraftFixed
)

// draftKinds holds the kinds' names and whether a drafter draws them from
// a draft model, in the order of their values: the constants above, then
// the kinds RegisterDraftKind adds.
var draftKinds = []struct {
	name  string
	drawn bool
}{{"iid", true}, {"wor", true}, {"topk", true}, {"greedy", true}, {"fixed", false}}

// RegisterDraftKind adds a draft kind named name and returns it, so a
// drafter of a new kind needs no edit here: its file in package sim/draft
// registers the kind and the drafter in init. drawn says whether its
// children come from a draft model (the kinds a name selects); a kind
// whose candidates are given, like DraftFixed, is not drawn. It panics on
// an empty or taken name (a programming error at init, as every registry
// of the project).
func RegisterDraftKind(name string, drawn bool) DraftKind {
	if name == "" {
		panic("sim: a draft kind with no name")
	}
	for _, k := range draftKinds {
		if k.name == name {
			panic("sim: draft kind " + name + " registered twice")
		}
	}
	draftKinds = append(draftKinds, struct {
		name  string
		drawn bool
	}{name, drawn})
	return DraftKind(len(draftKinds) - 1)
}

// String returns the kind's name: iid, wor, topk, greedy, fixed or a
// registered kind's.
func (k DraftKind) String() string {
	if k >= 0 && int(k) < len(draftKinds) {
		return draftKinds[k].name
	}
	return fmt.Sprintf("DraftKind(%d)", int(k))
}

// DraftKinds lists the kinds a drafter draws from a draft model, in the
// order of their values: the kinds a name can select (ParseDraftKind).
// DraftFixed is left out: its candidates are given, not drawn.
func DraftKinds() []DraftKind {
	var out []DraftKind
	for i, k := range draftKinds {
		if k.drawn {
			out = append(out, DraftKind(i))
		}
	}
	return out
}

// ParseDraftKind returns the kind of DraftKinds named s.
func ParseDraftKind(s string) (DraftKind, error) {
	var names []string
	for _, k := range DraftKinds() {
		if k.String() == s {
			return k, nil
		}
		names = append(names, k.String())
	}
	last := len(names) - 1
	return 0, fmt.Errorf("draft kind %q: use %s or %s", s, strings.Join(names[:last], ", "), names[last])
}

// Drafter builds draft trees after a context. Package sim/draft holds the
// drafters (one file per kind, and the EAGLE-2 dynamic tree); the exact
// engine enumerates their trees through this interface.
type Drafter interface {
	// Kind returns how children are chosen.
	Kind() DraftKind
	// Depth returns the depth of the trees it builds.
	Depth() int
	// Draft builds one random tree into dst (without target rows; call
	// dst.FillTarget). It draws its randomness from rng and keeps its
	// scratch in dst, so it is safe for concurrent use on distinct trees.
	Draft(rng *rand.Rand, ctx []int, dst *Tree)
	// Enumerate calls fn with every tree the drafter can build and its
	// probability (the rows of the target are not filled). The tree is
	// reused between calls; fn must not keep it. Enumerate is not safe
	// for concurrent use.
	Enumerate(ctx []int, fn func(t *Tree, w float64) error) error
}

// TreeCounter is implemented by drafters that can estimate, before
// enumerating, how many trees Enumerate(ctx, ·) visits; the exact engine
// refuses at once when the estimate exceeds MaxExactTrees. Drafters
// without it are taken to build one tree.
type TreeCounter interface {
	EstimateTrees(ctx []int) float64
}

// TopTokens appends to dst the indices of the b largest entries of q among
// those with q > 0, largest first, ties to the lowest index.
func TopTokens(dst []int, q []float64, b int) []int {
	start := len(dst)
	for x, v := range q {
		if v > 0 {
			dst = append(dst, x)
		}
	}
	s := dst[start:]
	sort.SliceStable(s, func(i, j int) bool { return q[s[i]] > q[s[j]] })
	if len(s) > b {
		dst = dst[:start+b]
	}
	return dst
}

// resizeV sets the vocabulary of a tree before its target rows are filled
// (a fixed candidate list does not know V).
func (t *Tree) resizeV(v int) {
	if t.V == v {
		return
	}
	t.V = v
	for i := range t.Nodes {
		t.pbuf[i] = grow(t.pbuf[i], v)
	}
}

// DraftTree draws a tree from d after ctx and fills the target rows of m:
// the one-call form for Monte Carlo loops.
func DraftTree(rng *rand.Rand, d Drafter, m Model, ctx []int, dst *Tree) {
	d.Draft(rng, ctx, dst)
	dst.FillTarget(m, ctx)
}
