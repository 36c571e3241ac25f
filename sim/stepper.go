package sim

import "math/rand/v2"

// Stepper verifies chain steps in batches, for the harness's own rules and
// for external implementations alike. For each i, bs[i] holds the rows
// (P, Q, Ctx) the harness chose; in verify mode bs[i].Tokens are the
// harness's drafts, in step mode the Stepper writes the drafts it sampled
// into bs[i].Tokens. It writes step i's outcome into outs[i]. rng is the
// harness's keyed stream for this batch.
type Stepper interface {
	Steps(rng *rand.Rand, bs []Block, outs []Outcome) error
}

// TreeStepper verifies tree steps in batches (an external implementation
// of tree verification answers a batch of trees per round trip): it writes
// tree i's outcome into outs[i]. rng is the harness's keyed stream for
// this batch. It must not modify the trees.
type TreeStepper interface {
	TreeSteps(rng *rand.Rand, ts []*Tree, outs []TreeOutcome) error
}
