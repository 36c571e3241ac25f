package seq

import (
	"context"
	"math"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/longtest"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// verdictsPair is the pair TestSequenceVerdictsLong generates on: small
// enough (V = 4) for the exact engine to enumerate every draft at γ = 4.
const verdictsPair = "markov:V=4,order=1,a=0.5,quality=0.5,seed=1"

// TestSequenceVerdictsLong generates with every chain rule and mutant at
// the CLI's default size (16 prompts x 1000 tokens, γ = 4) on
// verdictsPair, and judges each verdict by the rule's exact law on that
// same pair (sim.Exact, from every context):
//   - a rule the exact engine shows lossless from every context must come
//     out not_detected;
//   - a rule whose exact deviation exceeds the deviation the verdict
//     states it detects (MinDetectableTV, with power 0.9 at its Holm
//     share of the level 0.001) must come out violated. The exact
//     deviation used is the smallest over the contexts of TV/(γ+1),
//     with TV that of the joint law of the γ+1 tokens a step can emit:
//     the joint TV is at most the sum of the tokens' conditional TVs
//     given their prefixes, so their average is at least TV/(γ+1),
//     while the verdict's tests bound that average (in PIT bins, which
//     can only hide a deviation, so the bound asks no more of the test
//     than it states);
//   - any other rule (a deviation below what this size detects, or no
//     exact law) may say not_detected or violated, both honest, but
//     never inconclusive.
//
// Greedy rules are left out (their target is argmax decoding, which the
// PIT tests do not model).
func TestSequenceVerdictsLong(t *testing.T) {
	if !*long && !longtest.Enabled() {
		t.Skip("run with -seq.long")
	}
	const gamma = 4
	src, err := source.New(verdictsPair, gamma, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	pr, ok := sim.PairOf(src.BlockSource)
	if !ok {
		t.Fatalf("%s is not a model pair", verdictsPair)
	}
	v := pr.P.Vocab()
	prompts := make([][]int, 16)
	for i := range prompts {
		prompts[i] = []int{i % v}
	}
	var above, lossless int
	for _, e := range algos.All() {
		if e.Greedy {
			continue
		}
		bound, exactLossless, hasLaw := exactDeviation(t, e, pr, gamma, v)
		res, err := Generate(context.Background(), Config{Pair: pr, Prompts: prompts, Tokens: 1000, Drafter: chain,
			Algo: e.Name, Gamma: gamma, Seed: 9})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		vd := res.Verdict
		t.Logf("%s: %s p = %.3g, exact per-token deviation >= %.3g, detectable %.3g", e.Name, vd.Verdict, vd.PValue, bound, vd.MinDetectableTV)
		switch {
		case !hasLaw:
			// no exact law (mutant-zero-coin, whose fault needs a coin of
			// exactly 0): not judged by its size, only for honesty below
			if vd.Verdict != check.NotDetected && vd.Verdict != check.Violated {
				t.Errorf("%s: verdict %s, want not_detected or violated", e.Name, vd.Verdict)
			}
		case exactLossless:
			lossless++
			if vd.Verdict != check.NotDetected {
				t.Errorf("%s: exact engine lossless, verdict %s (p = %.3g), want not_detected", e.Name, vd.Verdict, vd.PValue)
			}
		case bound > vd.MinDetectableTV:
			above++
			if vd.Verdict != check.Violated {
				t.Errorf("%s: exact per-token deviation >= %.3g above the detectable %.3g, verdict %s (p = %.3g), want violated", e.Name, bound, vd.MinDetectableTV, vd.Verdict, vd.PValue)
			}
		case vd.Verdict != check.NotDetected && vd.Verdict != check.Violated:
			t.Errorf("%s: deviation >= %.3g below the detectable %.3g, verdict %s, want not_detected or violated", e.Name, bound, vd.MinDetectableTV, vd.Verdict)
		}
	}
	// the property is exercised on both sides
	if above == 0 || lossless == 0 {
		t.Errorf("%d rules above the detectable deviation and %d lossless; want some of each", above, lossless)
	}
}

// exactDeviation is the smallest over the contexts of the exact TV/(γ+1)
// of rule e's first γ+1 tokens on pr, whether e is lossless from every
// context (sim.ExactTol), and whether e has an exact law.
func exactDeviation(t *testing.T, e algos.Entry, pr sim.Pair, gamma, v int) (float64, bool, bool) {
	t.Helper()
	a, err := e.Build(nil)
	if err != nil {
		t.Fatalf("%s: %v", e.Name, err)
	}
	lw, ok := a.(sim.Lawer)
	if !ok {
		return 0, false, false
	}
	bound, lossless := math.Inf(1), true
	for s := 0; s < v; s++ {
		r, err := sim.Exact(pr, lw, sim.ExactConfig{Gamma: gamma, Context: []int{s}})
		if err != nil {
			t.Fatalf("%s from context %d: %v", e.Name, s, err)
		}
		bound, lossless = math.Min(bound, r.TV/float64(gamma+1)), lossless && r.Lossless
	}
	return bound, lossless, true
}
