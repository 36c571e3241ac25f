package external

import (
	"fmt"
	"slices"
	"strings"

	"github.com/specsim/specsim/sim/check"
)

// maxExamples is how many examples of each failure a component shows.
const maxExamples = 3

// invalidLog counts the implementation's invalid outcomes by kind and keeps
// the first examples of each. An invalid outcome is a well-formed answer
// that no correct sampler gives (accepted tokens that are not the drafts
// sent, more tokens than the row's draft length allows, a draft of draft
// probability 0, a tree path that is not in the tree): the step is
// reported to check as an outcome that breaks sim.CheckOutcome
// (Accepted = -1, or Node = -1 for trees), which counts it as invalid, and
// Run adds the "outcomes" component with these examples.
type invalidLog struct {
	n        map[string]int64
	examples map[string][]string
}

func (l *invalidLog) add(kind, example string) {
	if l.n == nil {
		l.n, l.examples = map[string]int64{}, map[string][]string{}
	}
	l.n[kind]++
	if len(l.examples[kind]) < maxExamples {
		l.examples[kind] = append(l.examples[kind], example)
	}
}

func (l *invalidLog) total() int64 {
	t := int64(0)
	for _, n := range l.n {
		t += n
	}
	return t
}

// component returns the "outcomes" component: violated, with counts and
// examples, when any step was invalid.
func (l *invalidLog) component() (check.Component, bool) {
	if l.total() == 0 {
		return check.Component{}, false
	}
	kinds := make([]string, 0, len(l.n))
	for k := range l.n {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d steps: %s (e.g. %s)", l.n[k], k, strings.Join(l.examples[k], "; ")))
	}
	return check.Component{Name: "outcomes", Verdict: check.Violated, Detail: strings.Join(parts, ". ")}, true
}

// Kinds of invalid outcomes.
const (
	invChanged   = "accepted tokens were changed (the emitted prefix is not the drafts)"
	invTooLong   = "more tokens emitted than the row's draft length allows"
	invQZero     = "a draft of draft probability 0 (it cannot have been drawn from q)"
	invNotInTree = "the accepted path is not a path of the tree sent"
)

// contractLog counts the step-mode answers whose accepted tokens are not
// the drafts the sampler returned with them. A sampler that returns a path
// of its tree, or its best beam, as "drafts" breaks the answer's contract
// but need not be biased: the step's emitted tokens are judged alone (as if
// it had returned emitted alone) and Run adds the "contract" component,
// which is not a violation of the law (check.ContractBreach).
type contractLog struct {
	n     int64
	first string
}

func (l *contractLog) add(step string) {
	if l.n == 0 {
		l.first = step
	}
	l.n++
}

// component returns the "contract" component when any answer broke it;
// sent is the number of steps sent.
func (l *contractLog) component(sent int64) (check.Component, bool) {
	if l.n == 0 {
		return check.Component{}, false
	}
	return check.Component{Name: "contract", Verdict: check.ContractBreach, Detail: fmt.Sprintf(
		"%d of %d steps emitted accepted tokens that are not the drafts the sampler returned (the first: %s); "+
			"their emitted tokens were judged alone. Fix: a tree or beam sampler returns emitted alone, or (None, emitted); "+
			"return (drafts, emitted) only when the accepted tokens are a prefix of those drafts", l.n, sent, l.first)}, true
}
