package algos

import (
	"fmt"
	"strings"

	"github.com/specsim/specsim/sim"
)

// TreeEntry is a registered tree (multi-candidate) rule: its description,
// the draft kind it is meant for (the drafter whose law its test assumes;
// a rule applied to another kind may be biased, which is how the top-k
// mutant is built) and its constructor.
type TreeEntry struct {
	Info
	// Draft is the draft kind the rule is run with.
	Draft sim.DraftKind
	// NeedsQ marks rules that read the draft probabilities q of the
	// nodes; they cannot verify probability-free candidate lists
	// (sim.DraftFixed, as the fms-extras speculator emits).
	NeedsQ bool
	New    func(Params) (sim.TreeAlgorithm, error)
}

var treeRegistry = map[string]TreeEntry{}

// RegisterTree adds a tree rule. Names are shared with the chain rules'
// registry: a duplicate in either panics (a programmer error).
func RegisterTree(e TreeEntry) {
	if _, dup := treeRegistry[e.Name]; dup {
		panic("algos: duplicate tree rule " + e.Name)
	}
	if _, dup := registry[e.Name]; dup {
		panic("algos: tree rule " + e.Name + " shadows a chain rule")
	}
	for _, p := range e.Params {
		if err := p.check(p.Default); err != nil {
			panic("algos: " + e.Name + ": default " + err.Error())
		}
	}
	treeRegistry[e.Name] = e
}

// LookupTree returns the tree rule called name, or an error listing the
// known ones.
func LookupTree(name string) (TreeEntry, error) {
	e, ok := treeRegistry[name]
	if !ok {
		return TreeEntry{}, fmt.Errorf("unknown tree algorithm %q; known: %s", name, strings.Join(TreeNames(), ", "))
	}
	return e, nil
}

// IsTree reports whether name is a registered tree rule.
func IsTree(name string) bool {
	_, ok := treeRegistry[name]
	return ok
}

// AllTree returns every tree rule, rules before mutants, each group sorted
// by name.
func AllTree() []TreeEntry {
	all := make([]TreeEntry, 0, len(treeRegistry))
	for _, e := range treeRegistry {
		all = append(all, e)
	}
	sortInfos(all, func(e TreeEntry) Info { return e.Info })
	return all
}

// TreeNames returns the tree rules' names in AllTree order.
func TreeNames() []string {
	var n []string
	for _, e := range AllTree() {
		n = append(n, e.Name)
	}
	return n
}

// Build constructs the tree rule with the given parameters (defaults
// filled in, unknown names and out-of-range values are errors).
func (e TreeEntry) Build(given Params) (sim.TreeAlgorithm, error) {
	full, err := e.Resolve(given)
	if err != nil {
		return nil, err
	}
	return e.New(full)
}

// HasTreeLaw reports whether a tree rule exposes its exact law.
func HasTreeLaw(a sim.TreeAlgorithm) bool {
	_, ok := a.(sim.TreeLawer)
	return ok
}

func treeNoParams(a sim.TreeAlgorithm) func(Params) (sim.TreeAlgorithm, error) {
	return func(Params) (sim.TreeAlgorithm, error) { return a, nil }
}
