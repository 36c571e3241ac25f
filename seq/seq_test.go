package seq

import (
	"context"
	"flag"
	"math"
	"reflect"
	"sync"
	"testing"

	"github.com/specsim/specsim/lm"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
)

var long = flag.Bool("seq.long", false, "run the sequence verdicts of every rule and mutant at the CLI's default size (slow)")

var (
	pairOnce sync.Once
	pair     *lm.Pair
	pairErr  error
)

// testPair is a small prose pair (V = 512) shared by the tests.
func testPair(t *testing.T) *lm.Pair {
	pairOnce.Do(func() {
		pair, pairErr = lm.NewPair("prose:order=4,V=512,cache=0.3,bytes=80000", "order=2", lm.Options{})
	})
	if pairErr != nil {
		t.Fatal(pairErr)
	}
	return pair
}

func runSpec(t *testing.T, s Spec) Report {
	t.Helper()
	if s.NumPrompts == 0 {
		s.NumPrompts = 8
	}
	if s.Tokens == 0 {
		s.Tokens = 500
	}
	if s.PromptLen == 0 {
		s.PromptLen = 64
	}
	if s.Gamma == 0 {
		s.Gamma = 4
	}
	if s.Seed == 0 {
		s.Seed = 9
	}
	r, err := RunPair(context.Background(), testPair(t), s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The drafters of package sim/draft by name.
const chain, heads, lookup = draft.ChainName, draft.HeadsName, draft.LookupName

// TestSequenceVerdicts runs whole generations: lossless rules with every
// drafter are not detected, mutants violated. 4,000 tokens per run; the
// level is 0.01 family-wise, so one false alarm in the lossless cases
// happens with probability about 0.01 per case under H0: with nine
// lossless cases about one seed in ten has one (seeds 7, 8 and 11 do;
// runSpec's seed 9 does not). The tests' p-values are uniform over 300
// seeds (TestGenerateVerdictCalibrated checks a synthetic case).
func TestSequenceVerdicts(t *testing.T) {
	cases := []struct {
		drafter, algo, policy string
		want                  string
		tokens                int // per prompt; 0: runSpec's 500
	}{
		{chain, "token", "", check.NotDetected, 0},
		{chain, "block", "", check.NotDetected, 0},
		{chain, "token", "conf:0.3", check.NotDetected, 0},
		{heads, "token", "", check.NotDetected, 0},
		{lookup, "token", "", check.NotDetected, 0},
		{Tree, "target-only", "", check.NotDetected, 0},
		{Tree, "specinfer", "", check.NotDetected, 0},
		{Tree, "rrs-wor", "", check.NotDetected, 0},
		{"greedy", "greedy-draft", "", check.NotDetected, 0},
		{chain, "mutant-always-accept", "", check.Violated, 0},
		{chain, "mutant-resample-p", "", check.Violated, 0},
		{chain, "mutant-q-mismatch", "", check.Violated, 0},
		// bonus-row errs only after a fully accepted draft (about 1 step in
		// 60 here): its deviation per emitted token is small, and the
		// tests of the emitted law see it at 16,000 tokens, not at 4,000
		// (the grouped token test that did had no valid p-value).
		{chain, "mutant-bonus-row", "", check.Violated, 2000},
		{chain, "lenience", "", check.Violated, 0},
		{Tree, "topk-ratio", "", check.Violated, 0},
	}
	for _, c := range cases {
		pol, _ := draft.ParsePolicy(c.policy)
		r := runSpec(t, Spec{Config: Config{Drafter: c.drafter, Algo: c.algo, Policy: pol, Workers: 2, Tokens: c.tokens}})
		if r.Verdict.Verdict != c.want {
			t.Errorf("%s/%s/%s: verdict %s (p = %.3g, tests %+v), want %s", c.drafter, c.algo, c.policy, r.Verdict.Verdict, r.Verdict.PValue, r.Verdict.Tests, c.want)
		}
		if r.Emitted < int64(r.Prompts*r.Tokens) || r.TargetCalls == 0 {
			t.Errorf("%s/%s: emitted %d in %d calls", c.drafter, c.algo, r.Emitted, r.TargetCalls)
		}
		t.Logf("%s/%s/%s: %s p=%.3g tokens/call %.3f acceptance %.3f speedup %.3f", c.drafter, c.algo, c.policy, r.Verdict.Verdict, r.Verdict.PValue, r.TokensPerCall, r.Acceptance, r.Speedup)
	}
}

// TestWorkersDeterministic: the same seed gives the same result for any
// worker count.
func TestWorkersDeterministic(t *testing.T) {
	for _, d := range []string{chain, Tree} {
		algo := "token"
		if d == Tree {
			algo = "specinfer"
		}
		a := runSpec(t, Spec{NumPrompts: 5, Config: Config{Drafter: d, Algo: algo, Tokens: 200, Workers: 1}})
		b := runSpec(t, Spec{NumPrompts: 5, Config: Config{Drafter: d, Algo: algo, Tokens: 200, Workers: 3}})
		for _, r := range []*Report{&a, &b} {
			r.Seconds, r.TokensPerSecond, r.Workers = 0, 0, 0
			if math.IsNaN(r.MeanBeta) {
				r.MeanBeta = 0 // a tree's mean β is n/a; NaN ≠ NaN for DeepEqual
			}
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: workers 1 and 3 differ:\n%+v\n%+v", d, a.Result, b.Result)
		}
	}
}

// TestOracleBound: the oracle emits the same tokens as fixed γ (same seed)
// and is charged no more, so its speedup is at least fixed γ's; and with
// c = v = 0 and the chain drafter speedup equals tokens per call.
func TestOracleBound(t *testing.T) {
	f := runSpec(t, Spec{Config: Config{Drafter: chain, Algo: "token", Cost: 0.2, Gamma: 6}})
	o := runSpec(t, Spec{Config: Config{Drafter: chain, Algo: "token", Cost: 0.2, Gamma: 6, Policy: draft.Policy{Kind: draft.PolicyOracle}}})
	if f.Emitted != o.Emitted || f.TargetCalls != o.TargetCalls {
		t.Fatalf("oracle changed the generation: %d/%d vs %d/%d", o.Emitted, o.TargetCalls, f.Emitted, f.TargetCalls)
	}
	if !(o.Speedup > f.Speedup) {
		t.Errorf("oracle speedup %g <= fixed %g", o.Speedup, f.Speedup)
	}
	z := runSpec(t, Spec{Config: Config{Drafter: chain, Algo: "token"}})
	if z.Speedup != z.TokensPerCall {
		t.Errorf("c = v = 0: speedup %g != tokens per call %g", z.Speedup, z.TokensPerCall)
	}
	if z.MeanAcceptedLength+1 < z.TokensPerCall-1e-12 || z.MeanAcceptedLength+1 > z.TokensPerCall+1e-12 {
		t.Errorf("token rule emits one token beyond the accepted ones: %g + 1 != %g", z.MeanAcceptedLength, z.TokensPerCall)
	}
}

func TestConfigErrors(t *testing.T) {
	p := testPair(t)
	ps, _ := p.Prompts(1, 8)
	for _, c := range []Config{
		{Drafter: "nope", Algo: "token", Gamma: 4, Tokens: 1},
		{Drafter: chain, Algo: "specinfer", Gamma: 4, Tokens: 1},
		{Drafter: Tree, Algo: "token", Gamma: 4, Tokens: 1},
		{Drafter: "wor", Algo: "token", Gamma: 4, Tokens: 1},
		{Drafter: chain, Algo: "token", Gamma: 0, Tokens: 1},
		{Drafter: lookup, Algo: "token", Gamma: 4, Tokens: 1, Policy: draft.Policy{Kind: draft.PolicyConf, Threshold: 0.5}},
		{Drafter: chain, Algo: "token", Gamma: 4, Tokens: 1, Policy: draft.Policy{Kind: draft.PolicyConf, Threshold: 1.5}},
		{Drafter: Tree, Algo: "specinfer", Gamma: 4, Tokens: 1, Policy: draft.Policy{Kind: draft.PolicyOracle}},
		{Drafter: heads, Algo: "token", Gamma: 4, Tokens: 1},
		{Drafter: "fixed", Algo: "shared-uniform", Gamma: 4, Tokens: 1},
		{Drafter: "iid", Algo: "rrs-wor", Gamma: 4, Tokens: 1}, // distinct draws assumed (algos.DrafterError)
	} {
		c.Pair, c.Prompts = p.Pair, ps
		if _, err := Generate(context.Background(), c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// Drafter tree is the tree drafter of the rule's kind: EAGLE-2's dynamic
// tree for rules over top-k children, the kind's drafter otherwise; naming
// that drafter gives the same generation.
func TestTreeIsTheRulesDrafter(t *testing.T) {
	for _, c := range []struct{ algo, named string }{{"target-only", draft.DynamicName}, {"specinfer", "iid"}, {"rrs-wor", "wor"}} {
		a := runSpec(t, Spec{NumPrompts: 3, Config: Config{Drafter: Tree, Algo: c.algo, Tokens: 150, Workers: 2}})
		b := runSpec(t, Spec{NumPrompts: 3, Config: Config{Drafter: c.named, Algo: c.algo, Tokens: 150, Workers: 2}})
		for _, r := range []*Report{&a, &b} {
			r.Seconds, r.TokensPerSecond, r.Drafter = 0, 0, ""
			if !math.IsNaN(r.MeanBeta) {
				t.Errorf("%s: a tree's mean β is %g, want NaN (n/a: no chain positions)", c.algo, r.MeanBeta)
			}
			r.MeanBeta = 0 // NaN ≠ NaN for DeepEqual
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: drafter tree and drafter %s differ:\n%+v\n%+v", c.algo, c.named, a.Result, b.Result)
		}
		if a.K != 4 || a.Emitted < 450 {
			t.Errorf("%s: k = %d, emitted %d", c.algo, a.K, a.Emitted)
		}
	}
}

// A generation stopped before its first step reports its measures as
// n/a (NaN), not 0: 'generate' then prints n/a, not 0.0000 [0.0000, 0.0000].
func TestNothingMeasuredIsNaN(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := RunPair(ctx, testPair(t), Spec{NumPrompts: 2, PromptLen: 64, Config: Config{Drafter: chain, Algo: "token", Gamma: 4, Tokens: 100, Seed: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.TargetCalls != 0 {
		t.Fatalf("interrupted %v with %d calls, want an interrupt before any", r.Interrupted, r.TargetCalls)
	}
	for name, v := range map[string]float64{"tokens per call": r.TokensPerCall, "its CI": r.TokensPerCallCI[0], "speedup": r.Speedup,
		"acceptance": r.Acceptance, "mean accepted length": r.MeanAcceptedLength, "mean β": r.MeanBeta} {
		if !math.IsNaN(v) {
			t.Errorf("%s = %g with nothing generated, want NaN", name, v)
		}
	}
}
