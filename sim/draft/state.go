package draft

import "github.com/specsim/specsim/sim"

// state is the working storage the drafters of this package keep in the
// tree they draft into (sim.Tree.DrafterState), so Draft is safe for
// concurrent use on distinct trees and does not allocate once warm.
type state struct {
	path  []int // the context and a node's path
	order []int // tokens in the order a node gets them
	dyn   dynamicState
}

// stateOf returns t's state, making one when t holds another drafter's.
func stateOf(t *sim.Tree) *state {
	if s, ok := t.DrafterState.(*state); ok {
		return s
	}
	s := &state{}
	t.DrafterState = s
	return s
}

// loadQ writes q(.|ctx, path to n) of model q into node n's draft row and
// returns the row.
func loadQ(q sim.Model, t *sim.Tree, ctx []int, n int) []float64 {
	s := stateOf(t)
	s.path = t.Path(append(s.path[:0], ctx...), n)
	row := t.QRow(n)
	q.Next(s.path, row)
	return row
}
