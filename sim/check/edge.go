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

// EdgeCheck runs a with scripted coins on two blocks over V = 3:
//
//  1. every coin exactly 0, and the first draft token has p = 0 < q: a
//     rule that compares r ≤ p/q inclusively accepts it (sglang issue
//     35771); no lossless rule may ever emit a token with p = 0;
//  2. every coin 1 - 2^-53 on a draft with p = q: the token must be kept
//     (p/q = 1 > r), so a rule with an off-by-one in the other direction
//     is caught too.
//
// It returns an error describing the first failure, or nil. Rules that use
// no coins pass trivially when they are correct.
func EdgeCheck(a sim.Algorithm) error {
	v := 3
	given := &run.Given{}
	l := &run.Loop{Keys: run.Named("check/edge"), Chains: given, Verifiers: []run.Verifier{run.Chain(a)}}
	w, err := l.NewWorker()
	if err != nil {
		return err
	}
	// scripted runs the rule once on b with every coin drawn from src.
	scripted := func(b *sim.Block, src constSource) (sim.Outcome, error) {
		given.B = b
		r, err := w.Round(run.Shared(rand.New(src)), 0)
		if err != nil {
			return sim.Outcome{}, err
		}
		return r.Outcome(), nil
	}
	zeroP := []float64{0, 0.5, 0.5}
	q := []float64{0.5, 0.25, 0.25}
	b := &sim.Block{Tokens: []int{0}, Q: []sim.Row{sim.F64(q)}, P: []sim.Row{sim.F64(zeroP), sim.F64(zeroP)}}
	o, err := scripted(b, 0)
	if err != nil {
		return err
	}
	if o.Accepted > 0 {
		return fmt.Errorf("edge: with a coin of exactly 0 the rule accepted draft token 0 whose target probability is 0 (inclusive comparison r <= p/q)")
	}
	if o.Next == 0 {
		return fmt.Errorf("edge: with coins of exactly 0 the rule emitted token 0 whose target probability is 0")
	}
	same := []float64{0.2, 0.3, 0.5}
	b = &sim.Block{Tokens: []int{2}, Q: []sim.Row{sim.F64(same)}, P: []sim.Row{sim.F64(same), sim.F64(same)}}
	if o, err = scripted(b, constSource(^uint64(0))); err != nil {
		return err
	}
	if o.Accepted != 1 {
		return fmt.Errorf("edge: with p = q and a coin of 1-2^-53 the rule rejected the draft token (p/q = 1 must accept)")
	}
	if o.Next != sim.NoToken && (o.Next < 0 || o.Next >= v) {
		return fmt.Errorf("edge: with p = q the rule emitted no valid bonus token (%d)", o.Next)
	}
	return nil
}
