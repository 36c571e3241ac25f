package check_test

import (
	"context"
	"testing"

	"github.com/specsim/specsim/internal/longtest"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// planParity plans, with resolve.Plan (what `simulate plan --test` runs),
// the trials at which the prefix test of position 2 detects the parity
// plant's value (eps) in its quantity on a uniform pair over V = 1,000
// (γ = 1, seed 1), then checks the plant at that size: it must be
// violated by that test. The quantity's bins grow with the trials, so
// the plant's value does too: the plan is asked for its value at guess
// trials, and again for its value at the planned count while that is
// smaller (at most 4 times); the plant must then be at least at the TV
// the plan states for that count, confirmed by a run up to
// resolve.ConfirmMaxTrials and beyond it the test's bound
// (check.Result.StatedTVBound), and the check at the count must state
// a TV at most the plan's. It returns the count.
func planParity(t *testing.T, eps float64, guess int64) int64 {
	const v = 1000
	p := make([]float64, v)
	for i := range p {
		p[i] = 1.0 / v
	}
	pair := sim.Pair{Name: "uniform1000", P: sim.Fixed(p), Q: sim.Fixed(p)}
	req := resolve.Request{Algo: "token", Pair: &pair}
	req.Gamma, req.Seed, req.Workers = 1, 1, 2
	tv := check.ParityValue(v, guess, 1, eps)
	var plan resolve.PlanReport
	for k := 0; k < 4; k++ {
		var err error
		if plan, err = resolve.Plan(context.Background(), req, tv, check.PrefixTest2); err != nil {
			t.Fatal(err)
		}
		at := check.ParityValue(v, plan.Trials, 1, eps)
		t.Logf("eps %.3g: plan for TV %.4g: %d trials (confirmed: %t, bound: %t); the plant there is at %.4g", eps, tv, plan.Trials, plan.CheckedTV != nil, plan.BoundTV != nil, at)
		if at >= tv {
			break
		}
		tv = at
	}
	n, planned := plan.Trials, plan.CheckedTV
	if planned == nil {
		planned = plan.BoundTV
	}
	if plan.OverCap || planned == nil || *planned > check.ParityValue(v, n, 1, eps) {
		t.Fatalf("the plan (%d trials) states no TV at most the plant's", n)
	}
	ch, err := sim.NewChain(pair, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(context.Background(), sim.Source{Spec: "uniform1000", BlockSource: ch}, check.ParityRule(v, eps),
		check.Config{Gamma: 1, Trials: n, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res.Tests {
		if x.Name == check.PrefixTest2 {
			t.Logf("the planted check: verdict %s, stated TV %.4g (plan: %.4g), p_holm %.3g", res.Verdict, x.MinDetTV, *planned, x.PHolm)
			if res.Verdict != check.Violated || x.PHolm >= res.Level || x.MinDetTV > *planned {
				t.Errorf("the parity plant at the planned %d trials: verdict %s, p_holm %.3g, stated TV %.4g (plan %.4g)", n, res.Verdict, x.PHolm, x.MinDetTV, *planned)
			}
		}
	}
	return n
}

// TestPlanParity (opt-in, SPECSIM_LONG=1: a plan runs several confirming
// checks, and the plant runs past a million trials): the
// exact-marginal dependence of issue 28 (position 2 preferring the parity
// of the first token) on V = 1,000 is violated at the size `plan` states
// for its value in the prefix test's quantity: at joint TV 0.5, where the
// plan confirms its count by a run, and at the joint TV 0.105
// (eps 0.21), where the count exceeds 1,000,000 and rests on the test's
// bound.
func TestPlanParity(t *testing.T) {
	longtest.Skip(t)
	planParity(t, 1, 100_000)
	if n := planParity(t, 0.21, 4_000_000); n <= resolve.ConfirmMaxTrials {
		t.Errorf("the issue's plant was planned at %d trials, within the confirmed range: the bound was not exercised", n)
	}
}
