package draft

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

// A ChainDrafter writes one draft chain after a context: the chain
// counterpart of sim.Drafter.
type ChainDrafter interface {
	// Draft writes up to gamma draft tokens after ctx into dst.Tokens and
	// the row each was drawn from into dst.Q, with the rows' storage in
	// rows; it leaves dst.P and dst.Ctx alone. It draws its randomness
	// from rng. ctx may be appended to within its capacity (scratch).
	Draft(rng *rand.Rand, ctx []int, gamma int, dst *sim.Block, rows *Rows)
	// Passes returns the draft forward passes it takes to propose n
	// tokens (the cost a generation charges for a draft).
	Passes(n int) int
}

// Drafter is a drafter of either shape, as New returns it: exactly one of
// its fields is set.
type Drafter struct {
	Chain ChainDrafter
	Tree  sim.Drafter
}

// The number of candidates k of a run, owned here and read by every
// command (check, exact, check --external's tree mode, generate, bench,
// bound): DefaultK for a tree rule or drafter when none is given (--k),
// ChainK for a chain rule or drafter, and at most MaxK.
const (
	DefaultK = 4
	ChainK   = 1
	MaxK     = 64
)

// K is the number of candidates of a tree run given k (0: none given):
// k, else DefaultK, or the tree drafter's own limit (KLimit) where that is
// smaller; drafter "" names none (bound's drafts).
func K(k int, drafter string) int {
	switch {
	case k != 0:
		return k
	case drafter != "":
		return min(DefaultK, KLimit(drafter))
	}
	return DefaultK
}

// Config describes a drafter for New. Each drafter reads the fields it
// needs and ignores the others.
type Config struct {
	// Name is the drafter (Names lists them).
	Name string
	// Q is the draft model (every drafter but lookup and fixed).
	Q sim.Model
	// Heads are the heads' models, head i drafting position i (heads).
	Heads []sim.Model
	// K is the number of chains (iid), of children of the root when
	// Branch is nil (wor, topk, greedy) or of nodes kept per layer
	// (dynamic); Depth is the trees' depth, or the number of heads a
	// chain needs (heads).
	K, Depth int
	// Branch[i] is the number of children of each node at depth i (wor,
	// topk, greedy); nil means (K, 1, ..., 1) of length Depth.
	Branch []int
	// Delay is the number of tokens drafted as a single path before the
	// K i.i.d. chains branch (delayed; 0 ≤ Delay ≤ Depth).
	Delay int
	// Cands are the candidate sequences (fixed).
	Cands [][]int
	// MaxNgram is the longest n-gram prompt lookup matches (lookup).
	MaxNgram int
	// Policy decides how long a chain runs (chain, heads; lookup drafts
	// no confidence, so it takes fixed or oracle only).
	Policy Policy
}

// builders maps a drafter name to its constructor from a Config.
var builders = map[string]func(Config) (Drafter, error){}

// A tree drafter declares, when it registers, what New needs to know
// without building it.
type treeTraits struct {
	// branches: it shapes its trees by Config.Branch (children per depth).
	branches bool
	// drawn: it drafts from the draft model (every tree drafter but fixed,
	// whose candidates are given).
	drawn bool
	// delays: it reads Config.Delay (a single path before branching).
	delays bool
	// maxK: the most children of the root it drafts (0: 64, the limit of
	// every drafter).
	maxK int
	// repeats: a node's draws may repeat a token (drawn with replacement).
	repeats bool
}

// trees holds the traits of the tree drafters, by name.
var trees = map[string]treeTraits{}

// register adds the drafter name, built by build; each drafter file
// registers itself in init (a tree drafter with registerTree).
func register(name string, build func(Config) (Drafter, error)) {
	if _, dup := builders[name]; dup {
		panic("draft: drafter " + name + " registered twice")
	}
	builders[name] = build
}

// registerTree adds the tree drafter name with its traits, as register
// does.
func registerTree(name string, tr treeTraits, build func(Config) (Drafter, error)) {
	register(name, build)
	trees[name] = tr
}

// Branches reports whether the drafter name shapes its trees by
// Config.Branch (children per depth); New refuses a Branch for any other.
func Branches(name string) bool { return trees[name].branches }

// Repeats reports whether the tree drafter name may draw one token more
// than once at a node (i.i.d. draws with replacement).
func Repeats(name string) bool { return trees[name].repeats }

// KLimit returns the most children of the root (Config.K) the tree
// drafter name drafts: MaxK for every drafter but those that declare
// fewer (hub, SpecHub's pair, drafts two).
func KLimit(name string) int {
	if k := trees[name].maxK; k > 0 {
		return k
	}
	return MaxK
}

// BranchingNames lists the drafters that read Config.Branch, in
// alphabetical order.
func BranchingNames() []string { return treeNames(func(tr treeTraits) bool { return tr.branches }) }

// TreeNames lists the tree drafters that draft from a draft model (all
// but fixed), in alphabetical order: the drafters a tree check can name.
func TreeNames() []string { return treeNames(func(tr treeTraits) bool { return tr.drawn }) }

// ChainNames lists the chain drafters, in alphabetical order.
func ChainNames() []string {
	var names []string
	for _, n := range Names() {
		if _, tree := trees[n]; !tree {
			names = append(names, n)
		}
	}
	return names
}

func treeNames(keep func(treeTraits) bool) []string {
	var names []string
	for _, n := range Names() {
		if tr, ok := trees[n]; ok && keep(tr) {
			names = append(names, n)
		}
	}
	return names
}

// Names lists the drafters New builds, in alphabetical order.
func Names() []string {
	names := make([]string, 0, len(builders))
	for n := range builders {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// New returns the drafter c.Name names, built from c.
func New(c Config) (Drafter, error) {
	build, ok := builders[c.Name]
	if !ok {
		return Drafter{}, fmt.Errorf("drafter %q: unknown; use one of %s", c.Name, strings.Join(Names(), ", "))
	}
	if len(c.Branch) > 0 && !trees[c.Name].branches {
		return Drafter{}, BranchError(c.Name)
	}
	if c.Delay != 0 && !trees[c.Name].delays {
		return Drafter{}, DelayError(c.Name)
	}
	return build(c)
}

// Delays reports whether the drafter name reads Config.Delay; New refuses
// a Delay for any other.
func Delays(name string) bool { return trees[name].delays }

// DelayError is the error of a delay given to drafter name, which does
// not read one: a ParamError naming the field delay.
func DelayError(name string) error {
	return diag.Param("delay", " does not apply to drafter %s: only %s drafts a single path before it branches; drop it, or set draft to %s",
		name, DraftDelayed, DraftDelayed)
}

// BranchError is the error of a branching (children per depth) given to
// drafter name, which does not read one: a ParamError naming the field
// branch (a front end shows its flag).
func BranchError(name string) error {
	return diag.Param("branch", " does not apply to drafter %s: it does not shape its trees by children per depth; drop it, or use a drafter that does (%s)",
		name, strings.Join(BranchingNames(), ", "))
}

// NewTree returns the tree drafter of kind, built from c (c.Name is set
// to the kind's name).
func NewTree(kind sim.DraftKind, c Config) (sim.Drafter, error) {
	c.Name = kind.String()
	d, err := New(c)
	if err != nil {
		return nil, err
	}
	if d.Tree == nil {
		return nil, fmt.Errorf("drafter %s: drafts chains, not trees", c.Name)
	}
	return d.Tree, nil
}

// Rows is the row storage of chain drafts: draft rows Q(i) and target
// rows P(i) of length V, kept and reused across drafts.
type Rows struct {
	V    int
	q, p [][]float64
}

// Q returns the storage of draft row i.
func (s *Rows) Q(i int) []float64 { return rowAt(&s.q, i, s.V) }

// P returns the storage of target row i.
func (s *Rows) P(i int) []float64 { return rowAt(&s.p, i, s.V) }

func rowAt(rows *[][]float64, i, v int) []float64 {
	for len(*rows) <= i {
		*rows = append(*rows, make([]float64, v))
	}
	return (*rows)[i]
}

// grow returns b with length n, reallocated when its capacity is short.
func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
