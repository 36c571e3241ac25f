package algos

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/specsim/specsim/sim"
)

// Param describes one numeric parameter of a rule.
type Param struct {
	Name    string
	Default float64
	// Min and Max bound the value; MinOpen and MaxOpen exclude the bound
	// itself. Use ±Inf for no bound.
	Min, Max         float64
	MinOpen, MaxOpen bool
	Doc              string
}

// Range renders the admissible interval, for example "(0, 1]".
func (p Param) Range() string {
	lo, hi := "[", "]"
	if p.MinOpen {
		lo = "("
	}
	if p.MaxOpen || math.IsInf(p.Max, 1) {
		hi = ")"
	}
	return fmt.Sprintf("%s%g, %g%s", lo, p.Min, p.Max, hi)
}

func (p Param) check(v float64) error {
	bad := math.IsNaN(v) || v < p.Min || v > p.Max || (p.MinOpen && v == p.Min) || (p.MaxOpen && v == p.Max)
	if bad {
		return fmt.Errorf("param %s = %g is outside %s: %s", p.Name, v, p.Range(), p.Doc)
	}
	return nil
}

// Params are parameter values by name.
type Params map[string]float64

// String renders the setting as "a=1,b=2", names sorted ("" when empty),
// the form the audit's rows and 'simulate list' show.
func (ps Params) String() string {
	keys := make([]string, 0, len(ps))
	for k := range ps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, ps[k])
	}
	return strings.Join(parts, ",")
}

// Info describes a registered rule: every fact about it that the rest of
// the harness reads (the audit, the lossy frontier, the allocation test,
// the figures' legends, 'simulate list' and the README's rule table), so
// that a rule's file is the one place that states them.
type Info struct {
	Name string
	// Summary is one line saying what the rule does.
	Summary string
	// Paper is the citation the rule follows.
	Paper  string
	Params []Param
	// Mutant marks a planted bug (a negative control).
	Mutant bool
	// Lossy marks a rule that trades fidelity for acceptance by design.
	Lossy bool
	// Greedy marks a rule that preserves argmax decoding of the target,
	// not sampling from it.
	Greedy bool
	// Strict is the setting at which a lossy rule is token verification
	// outcome for outcome on the same uniforms (nil: it has none). The
	// audit expects the rule preserved there and the tests check it bit
	// for bit against Token.
	Strict Params
	// Frontier is a lossy rule's parameter grid: the settings, strict
	// point included, that trace its acceptance against KL(p‖π) (the
	// lossy-frontier experiment sweeps it; nil: not swept).
	Frontier *Sweep
	// AllocFree promises that Accept (Verify for tree rules) allocates
	// nothing per step at the default parameters; TestRegisteredNoAllocs
	// holds every such rule to it.
	AllocFree bool
	// Draft is the draft kind a tree rule is run with: the drafter whose
	// law its test assumes (a rule applied to another kind may be biased,
	// which is how the top-k mutant is built). Chain rules leave it zero.
	Draft sim.DraftKind
	// NeedsQ marks tree rules that read the draft probabilities q of the
	// nodes; they cannot verify probability-free candidate lists
	// (sim.DraftFixed, as the fms-extras speculator emits).
	NeedsQ bool
	// Distinct marks tree rules that verify a node's draws as distinct
	// tokens (drafted without replacement): their law is not defined when
	// a token is drawn twice, so a drafter that repeats tokens
	// (draft.Repeats) is refused (DrafterError).
	Distinct bool
}

// Sweep is a lossy rule's parameter grid (Info.Frontier).
type Sweep struct {
	// Param is the swept parameter and Values its settings, the strict
	// point included where the rule has one.
	Param  string
	Values []float64
	// Extra fixes other parameters as functions of the swept value (nil:
	// their defaults).
	Extra func(v float64) Params
}

// Rule is a registered rule of either kind, chain (A = sim.Algorithm) or
// tree (A = sim.TreeAlgorithm): its facts and its constructor, which
// receives every parameter (defaults filled in, ranges checked).
type Rule[A any] struct {
	Info
	New func(Params) (A, error)
}

// Entry is a registered chain rule.
type Entry = Rule[sim.Algorithm]

// TreeEntry is a registered tree (multi-candidate) rule.
type TreeEntry = Rule[sim.TreeAlgorithm]

// registry holds the rules of one kind. Chain and tree rules share one
// namespace (taken), so a name means one rule everywhere.
type registry[A any] struct {
	kind  string
	rules map[string]Rule[A]
}

var (
	taken  = map[string]string{}
	chains = &registry[sim.Algorithm]{kind: "algorithm", rules: map[string]Rule[sim.Algorithm]{}}
	trees  = &registry[sim.TreeAlgorithm]{kind: "tree algorithm", rules: map[string]Rule[sim.TreeAlgorithm]{}}
)

// add registers e. It panics on a duplicate name and on facts that
// contradict the parameters (programmer errors).
func (r *registry[A]) add(e Rule[A]) {
	if kind, dup := taken[e.Name]; dup {
		panic("algos: " + r.kind + " " + e.Name + " is already registered as a " + kind)
	}
	if e.New == nil {
		panic("algos: " + e.Name + " has no constructor")
	}
	for _, p := range e.Params {
		if err := p.check(p.Default); err != nil {
			panic("algos: " + e.Name + ": default " + err.Error())
		}
	}
	if _, err := e.Resolve(e.Strict); e.Strict != nil && err != nil {
		panic("algos: " + e.Name + ": " + err.Error())
	}
	if s := e.Frontier; s != nil {
		for _, v := range s.Values {
			if _, err := e.Resolve(s.At(v)); err != nil {
				panic("algos: " + e.Name + ": frontier: " + err.Error())
			}
		}
	}
	taken[e.Name] = r.kind
	r.rules[e.Name] = e
}

func (r *registry[A]) lookup(name string) (Rule[A], error) {
	e, ok := r.rules[name]
	if !ok {
		var names []string
		for _, e := range r.all() {
			names = append(names, e.Name)
		}
		return Rule[A]{}, fmt.Errorf("unknown %s %q; known: %s (see 'simulate list')", r.kind, name, strings.Join(names, ", "))
	}
	return e, nil
}

// all returns the rules, rules before mutants, each group sorted by name.
func (r *registry[A]) all() []Rule[A] {
	all := make([]Rule[A], 0, len(r.rules))
	for _, e := range r.rules {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Mutant != b.Mutant {
			return !a.Mutant
		}
		return a.Name < b.Name
	})
	return all
}

// Register adds a chain rule. It panics on a name already taken by a
// chain or tree rule, or on facts outside the parameters' ranges
// (programmer errors).
func Register(e Entry) { chains.add(e) }

// RegisterTree adds a tree rule; see Register.
func RegisterTree(e TreeEntry) { trees.add(e) }

// Lookup returns the chain rule called name, or an error listing the
// known ones.
func Lookup(name string) (Entry, error) { return chains.lookup(name) }

// LookupTree returns the tree rule called name, or an error listing the
// known ones.
func LookupTree(name string) (TreeEntry, error) { return trees.lookup(name) }

// IsTree reports whether name is a registered tree rule.
func IsTree(name string) bool {
	_, ok := trees.rules[name]
	return ok
}

// All returns every chain rule, rules before mutants, each group sorted by
// name.
func All() []Entry { return chains.all() }

// AllTree returns every tree rule in the order of All.
func AllTree() []TreeEntry { return trees.all() }

// Names returns the chain rules' names in the order of All.
func Names() []string { return names(chains) }

// TreeNames returns the tree rules' names in the order of AllTree.
func TreeNames() []string { return names(trees) }

func names[A any](r *registry[A]) []string {
	var n []string
	for _, e := range r.all() {
		n = append(n, e.Name)
	}
	return n
}

// At is the parameter setting of the sweep at value v: Param = v and
// the Extra parameters.
func (s Sweep) At(v float64) Params {
	ps := Params{s.Param: v}
	if s.Extra != nil {
		for k, x := range s.Extra(v) {
			ps[k] = x
		}
	}
	return ps
}

// Resolve returns every parameter of the rule: the given values, and
// defaults for the missing ones. Unknown names and values outside their
// ranges are errors naming the rule, the parameter and the range.
func (in Info) Resolve(given Params) (Params, error) {
	full := Params{}
	known := map[string]bool{}
	for _, p := range in.Params {
		known[p.Name] = true
		full[p.Name] = p.Default
	}
	for k, v := range given {
		if !known[k] {
			if len(in.Params) == 0 {
				return nil, fmt.Errorf("algorithm %s takes no parameters, got %s", in.Name, k)
			}
			var names []string
			for _, p := range in.Params {
				names = append(names, p.Name)
			}
			return nil, fmt.Errorf("algorithm %s has no parameter %q; it takes %s", in.Name, k, strings.Join(names, ", "))
		}
		full[k] = v
	}
	for _, p := range in.Params {
		if err := p.check(full[p.Name]); err != nil {
			return nil, fmt.Errorf("algorithm %s: %w", in.Name, err)
		}
	}
	return full, nil
}

// Build constructs the rule with the given parameters (see Resolve).
func (e Rule[A]) Build(given Params) (A, error) {
	full, err := e.Resolve(given)
	if err != nil {
		var zero A
		return zero, err
	}
	return e.New(full)
}

// New looks up and builds a rule in one call.
func New(name string, params Params) (sim.Algorithm, error) {
	e, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return e.Build(params)
}

// HasLaw reports whether a rule exposes its exact law.
func HasLaw(a sim.Algorithm) bool {
	_, ok := a.(sim.Lawer)
	return ok
}

func noParams(a sim.Algorithm) func(Params) (sim.Algorithm, error) {
	return func(Params) (sim.Algorithm, error) { return a, nil }
}

func treeNoParams(a sim.TreeAlgorithm) func(Params) (sim.TreeAlgorithm, error) {
	return func(Params) (sim.TreeAlgorithm, error) { return a, nil }
}

// HasTreeLaw reports whether a tree rule exposes its exact law.
func HasTreeLaw(a sim.TreeAlgorithm) bool {
	_, ok := a.(sim.TreeLawer)
	return ok
}

// residual samples norm((w·p - q)+) at a fresh uniform. If rounding in
// float32 rows leaves the residual numerically empty it falls back to p,
// the law the residual tends to as q's excess vanishes.
func residual(u, w float64, p, q sim.Row) int {
	if y, z := sim.SampleResidualMass(u, w, p, q); z > 0 && y >= 0 {
		return y
	}
	return sim.SampleRow(u, p)
}
