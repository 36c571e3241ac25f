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

// Info describes a registered rule.
type Info struct {
	Name    string
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
}

// Entry is a registered rule: its description and its constructor, which
// receives every parameter (defaults filled in, ranges checked).
type Entry struct {
	Info
	New func(Params) (sim.Algorithm, error)
}

var registry = map[string]Entry{}

// Register adds a rule. It panics on a duplicate name or a default outside
// its own range (programmer errors).
func Register(e Entry) {
	if _, dup := registry[e.Name]; dup {
		panic("algos: duplicate rule " + e.Name)
	}
	for _, p := range e.Params {
		if err := p.check(p.Default); err != nil {
			panic("algos: " + e.Name + ": default " + err.Error())
		}
	}
	registry[e.Name] = e
}

// Lookup returns the rule called name, or an error listing the known ones.
func Lookup(name string) (Entry, error) {
	e, ok := registry[name]
	if !ok {
		return Entry{}, fmt.Errorf("unknown algorithm %q; known: %s (see 'simulate list')", name, strings.Join(Names(), ", "))
	}
	return e, nil
}

// Names returns every registered name, rules before mutants, each group
// sorted.
func Names() []string {
	var names []string
	for _, e := range All() {
		names = append(names, e.Name)
	}
	return names
}

// All returns every registered rule, rules before mutants, each group
// sorted by name.
func All() []Entry {
	all := make([]Entry, 0, len(registry))
	for _, e := range registry {
		all = append(all, e)
	}
	sortInfos(all, func(e Entry) Info { return e.Info })
	return all
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
func (e Entry) Build(given Params) (sim.Algorithm, error) {
	full, err := e.Resolve(given)
	if err != nil {
		return nil, err
	}
	return e.New(full)
}

// sortInfos orders rules before mutants, each group by name.
func sortInfos[E any](all []E, info func(E) Info) {
	sort.Slice(all, func(i, j int) bool {
		a, b := info(all[i]), info(all[j])
		if a.Mutant != b.Mutant {
			return !a.Mutant
		}
		return a.Name < b.Name
	})
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

// residual samples norm((w·p - q)+) at a fresh uniform. If rounding in
// float32 rows leaves the residual numerically empty it falls back to p,
// the law the residual tends to as q's excess vanishes.
func residual(u, w float64, p, q sim.Row) int {
	if y, z := sim.SampleResidualMass(u, w, p, q); z > 0 && y >= 0 {
		return y
	}
	return sim.SampleRow(u, p)
}
