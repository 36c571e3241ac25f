package check

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Stepper produces verified steps in batches (see sim.Stepper).
type Stepper = sim.Stepper

// DraftSampler is implemented by a Stepper in step mode: when SamplesDrafts
// reports true the Stepper draws every bs[i].Tokens itself from bs[i].Q
// (bs[i].Tokens arrives with length γ and the harness's contents are to be
// overwritten). A Stepper that does not implement it is in verify mode.
type DraftSampler interface {
	SamplesDrafts() bool
}

// AlgorithmStepper adapts a sim.Algorithm to a Stepper in verify mode: step
// i is a.Accept(rng, &bs[i]), the steps of a batch drawing from rng in
// order.
type AlgorithmStepper struct {
	A sim.Algorithm
}

// Steps implements Stepper.
func (s AlgorithmStepper) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	for i := range bs {
		outs[i] = s.A.Accept(rng, &bs[i])
	}
	return nil
}

// StepMode reports whether s samples its own drafts (see DraftSampler).
func StepMode(s Stepper) bool {
	d, ok := s.(DraftSampler)
	return ok && d.SamplesDrafts()
}
