package check

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
)

// constSource is a rand.Source that always returns the same word: 0 makes
// every Float64 exactly 0, ^0 makes it 1 - 2^-53.
type constSource uint64

func (s constSource) Uint64() uint64 { return uint64(s) }

// edgeCase is a block and a scripted coin: every Float64 the rule draws is
// the same value.
type edgeCase struct {
	what string
	b    *sim.Block
	coin constSource
}

// edgeCases are the scripted cases over V = 3 and 4:
//
//  1. every coin exactly 0, and the draft token has p = 0 < q: a rule
//     that compares r ≤ p/q inclusively accepts it (sglang issue 35771);
//  2. every coin 1 - 2^-53 on the same block (a rejection);
//  3. both coins on a block with p = q, where one token has p = 0.
func edgeCases() []edgeCase {
	zeroP := []float64{0, 0.5, 0.5}
	q := []float64{0.5, 0.25, 0.25}
	b1 := &sim.Block{Tokens: []int{0}, Q: []sim.Row{sim.F64(q)}, P: []sim.Row{sim.F64(zeroP), sim.F64(zeroP)}}
	same := []float64{0.2, 0.3, 0.5, 0}
	b3 := &sim.Block{Tokens: []int{2}, Q: []sim.Row{sim.F64(same)}, P: []sim.Row{sim.F64(same), sim.F64(same)}}
	return []edgeCase{
		{"a coin of exactly 0 and a draft of target probability 0", b1, 0},
		{"a coin of 1-2^-53 and a draft of target probability 0", b1, constSource(^uint64(0))},
		{"a coin of exactly 0 and p = q", b3, 0},
		{"a coin of 1-2^-53 and p = q", b3, constSource(^uint64(0))},
	}
}

// scripted runs a once on every edge case through the round loop and
// calls check with each case and its outcome; it returns the first error.
func scripted(a sim.Algorithm, check func(c edgeCase, o sim.Outcome) error) error {
	given := &run.Given{}
	l := &run.Loop{Keys: run.Named("check/edge"), Chains: given, Verifiers: []run.Verifier{run.Chain(a)}}
	w, err := l.NewWorker()
	if err != nil {
		return err
	}
	for _, c := range edgeCases() {
		given.B = c.b
		r, err := w.Round(run.Shared(rand.New(c.coin)), 0)
		if err != nil {
			return err
		}
		if err := check(c, r.Outcome()); err != nil {
			return err
		}
	}
	return nil
}

// EdgeCheck runs a with scripted coins (exactly 0, and 1 - 2^-53) on
// blocks built to expose inclusive comparisons, and flags only what no
// lossless rule may do, whatever its law: an outcome outside its range
// (sim.CheckOutcome), a step that emits nothing, or an emitted token of
// target probability 0. A rule that rejects where another would accept
// (p = q, say) is lossless or not by its law, not by these cases: that is
// EdgeConform's question, for a named rule. It returns an error describing
// the first failure, or nil.
func EdgeCheck(a sim.Algorithm) error {
	return scripted(a, func(c edgeCase, o sim.Outcome) error {
		if err := sim.CheckOutcome(c.b, o); err != nil {
			return fmt.Errorf("edge: with %s the rule broke the output format: %v", c.what, err)
		}
		if o.Emitted() == 0 {
			return fmt.Errorf("edge: with %s the rule emitted nothing", c.what)
		}
		for i, x := range c.b.Tokens[:o.Accepted] {
			if c.b.P[i].At(x) <= 0 {
				return fmt.Errorf("edge: with %s the rule accepted draft token %d, whose target probability is 0 "+InclusiveMark, c.what, x)
			}
		}
		if o.Next != sim.NoToken && c.b.P[o.Accepted].At(o.Next) <= 0 {
			return fmt.Errorf("edge: with %s the rule emitted token %d, whose target probability is 0", c.what, o.Next)
		}
		return nil
	})
}

// EdgeConform runs a on the same scripted cases and flags an outcome that
// law (a named rule's exact law given the block) gives probability zero:
// with p = q and a coin of 1 - 2^-53, token verification must accept
// (p/q = 1 > r), so a rule that implements it and rejects there is caught.
// It belongs with the conformance test to that rule, beside (not inside)
// the losslessness verdict.
func EdgeConform(a sim.Algorithm, law sim.Lawer) error {
	var l sim.Law
	return scripted(a, func(c edgeCase, o sim.Outcome) error {
		if err := sim.CheckOutcome(c.b, o); err != nil {
			return fmt.Errorf("edge: with %s the rule broke the output format: %v", c.what, err)
		}
		if err := law.Law(c.b, &l); err != nil {
			return fmt.Errorf("edge: the reference law on %s: %w", c.what, err)
		}
		if l.At(o.Accepted, o.Next) <= 0 {
			return fmt.Errorf("edge: with %s the rule gave (accepted %d, next %d), an outcome of probability 0 under the reference law", c.what, o.Accepted, o.Next)
		}
		return nil
	})
}
