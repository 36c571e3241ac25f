package resolve

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// PlanReport answers "how many trials, and how many seconds on this
// machine, does a check need to detect a deviation of TV >= TV in Test's
// quantity with probability Power at level Level".
type PlanReport struct {
	Algorithm string `json:"algorithm"`
	Source    string `json:"source"`
	Gamma     int    `json:"gamma"`
	Mode      string `json:"mode"`
	// Test names the test planned for and Quantity what its TV bounds.
	Test     string  `json:"test"`
	Quantity string  `json:"quantity"`
	TV       float64 `json:"tv"`
	Level    float64 `json:"level"`
	Power    float64 `json:"power"`
	// Trials is the planned count, Seconds its time at the rate of the
	// largest check the plan ran (the confirming one, else the pilot; on
	// this machine, with the pilot's workers): a pilot's time holds the
	// check's fixed costs (the pool, the laws), which a pilot-rate estimate
	// multiplied tenfold at 10^6 trials.
	Trials  int64   `json:"trials"`
	Seconds float64 `json:"seconds"`
	// SecondsFrom names the check whose rate Seconds is at: "pilot" or
	// "confirming check".
	SecondsFrom string `json:"seconds_from"`
	// PilotTrials and PilotSeconds are the pilot check's; PilotTV the
	// test's minimum detectable TV there.
	PilotTrials  int64   `json:"pilot_trials"`
	PilotSeconds float64 `json:"pilot_seconds"`
	PilotTV      float64 `json:"pilot_tv"`
	// NeededTrials is the count the scaling asks for, unclamped; when it
	// exceeds sim.MaxTrials (OverCap), Trials is that cap, and CapTV is
	// the TV a check of the cap detects (the plan cannot reach TV).
	NeededTrials float64 `json:"needed_trials"`
	OverCap      bool    `json:"over_cap"`
	CapTV        float64 `json:"cap_tv,omitempty"`
	// CheckedTV is the test's minimum detectable TV in a check of Trials
	// trials, when one was run to confirm the plan (ConfirmMaxTrials);
	// null otherwise.
	CheckedTV *float64 `json:"checked_tv"`
	// BoundTV, where the count exceeds ConfirmMaxTrials and the test is a
	// prefix test in re-drawn cells, is the bound on the TV a check of
	// Trials trials states for it (check.Result.StatedTVBound), computed
	// from the test's layout without running it; null otherwise.
	BoundTV *float64 `json:"bound_tv"`
}

// ConfirmMaxTrials is the largest planned count a plan confirms by running
// the check it plans (above it the plan rests on the pilot's scaling).
const ConfirmMaxTrials = 1_000_000

// planPilot is the pilot check's trial count: every test's grid is at its
// cap at this size on small pools and pairs, so a test's detectable TV
// then falls as 1/sqrt(trials).
const planPilot = 20000

// planBoundMax bounds the counts planByBound searches (beyond it the plan
// says the count is out of reach).
const planBoundMax = 1 << 60

// planRescales bounds the confirming checks after the first.
const planRescales = 8

// Plan runs a pilot of req's check and returns the trials that detect a
// deviation of TV >= tv in test's quantity (test "" plans for the test
// with the smallest detectable TV) with req's power at its Holm share of
// req's level. A test's minimum detectable TV is sqrt(λ/(4n)) for the
// noncentrality λ its degrees of freedom and level need, so once its grid
// stops growing it falls as 1/sqrt(n): the plan scales the pilot's TV,
// then, up to ConfirmMaxTrials, runs the planned check once and scales
// again by what it found (its grid or number of tests may differ from the
// pilot's), so the returned count detects tv in that check.
func Plan(ctx context.Context, req Request, tv float64, test string) (PlanReport, error) {
	if !(tv > 0 && tv < 1) {
		return PlanReport{}, diag.Param("tv", " = %g; give a total variation in (0, 1)", tv)
	}
	var rateN int64    // the largest run's trials
	var rateEl float64 // and its seconds
	run := func(n int64) (Report, check.Test, float64, error) {
		r := req
		r.Trials, r.Seconds, r.Progress = n, 0, nil
		start := time.Now()
		rep, err := Run(ctx, r)
		el := time.Since(start).Seconds()
		if err == nil && n >= rateN {
			rateN, rateEl = n, el
		}
		if err != nil {
			return rep, check.Test{}, el, err
		}
		t, err := planTest(rep, test)
		return rep, t, el, err
	}
	pilot := int64(planPilot)
	rep, t, el, err := run(pilot)
	if err != nil {
		return PlanReport{}, err
	}
	out := PlanReport{Algorithm: rep.Algorithm, Source: rep.Source, Gamma: rep.Gamma, Mode: rep.Mode,
		Test: t.Name, Quantity: t.Quantity, TV: tv, Level: rep.Level, Power: rep.Power,
		PilotTrials: pilot, PilotSeconds: el, PilotTV: t.MinDetTV}
	if !(t.MinDetTV < math.Inf(1)) {
		return out, fmt.Errorf("plan: test %s has no power at %d trials (no degrees of freedom); it cannot be planned", t.Name, pilot)
	}
	scale := func(n int64, got float64) int64 {
		m := math.Ceil(float64(n) * (got / tv) * (got / tv))
		out.NeededTrials = m
		if m > sim.MaxTrials {
			// said, never silent: the count a check of this TV needs is
			// above what a check accepts
			out.OverCap, out.CapTV = true, got*math.Sqrt(float64(n)/sim.MaxTrials)
			return sim.MaxTrials
		}
		return int64(m)
	}
	out.Trials = max(scale(pilot, t.MinDetTV), 1)
	if out.Trials <= ConfirmMaxTrials && out.Trials != pilot {
		_, t2, _, err := run(out.Trials)
		if err != nil {
			return out, err
		}
		// a test whose grid grows with the trials (the prefix tests'
		// cells and draws) falls slower than 1/sqrt(n): scale again
		// until the check at the count detects tv
		// (as n^(-3/8) where the draws' cells grow as √n), so these
		// scale by (TV/tv)³
		for k := 0; t2.MinDetTV > tv && k < planRescales; k++ {
			out.Trials = scale(out.Trials, t2.MinDetTV*math.Sqrt(t2.MinDetTV/tv))
			if out.Trials > ConfirmMaxTrials {
				break
			}
			if _, t2, _, err = run(out.Trials); err != nil {
				return out, err
			}
		}
		if out.Trials <= ConfirmMaxTrials {
			c := t2.MinDetTV
			out.CheckedTV = &c
		}
	}
	if out.CheckedTV == nil && out.Trials > ConfirmMaxTrials {
		planByBound(&out, rep, t.Name)
	}
	out.Seconds, out.SecondsFrom = rateEl*float64(out.Trials)/float64(rateN), "pilot"
	if rateN > pilot {
		out.SecondsFrom = "confirming check"
	}
	return out, nil
}

// planByBound replaces a count above ConfirmMaxTrials, which the
// pilot's scaling understates for a test whose cells grow with the
// trials, by the smallest count (a bisection; the bound falls with the
// trials but for the last draw's rounding) at which the test's own bound
// on its stated TV (check.Result.StatedTVBound) is at most out.TV, where
// the pilot's test has such a bound; above sim.MaxTrials the plan is over
// the cap, CapTV the bound at the cap.
func planByBound(out *PlanReport, pilot Report, test string) {
	bound := func(n int64) float64 {
		b, _ := pilot.StatedTVBound(test, n)
		return b
	}
	if _, ok := pilot.StatedTVBound(test, out.PilotTrials); !ok {
		return
	}
	lo, hi := out.PilotTrials, int64(sim.MaxTrials)
	for bound(hi) > out.TV { // beyond the cap: how far, for the text
		if hi >= planBoundMax {
			out.Trials, out.NeededTrials, out.OverCap, out.CapTV = sim.MaxTrials, math.Inf(1), true, bound(sim.MaxTrials)
			return
		}
		lo, hi = hi, hi*4
	}
	for hi-lo > 1 { // bound(hi) <= TV < bound(lo), but for the last draw's rounding
		if mid := lo + (hi-lo)/2; bound(mid) <= out.TV {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi > sim.MaxTrials {
		out.Trials, out.NeededTrials, out.OverCap, out.CapTV = sim.MaxTrials, float64(hi), true, bound(sim.MaxTrials)
		return
	}
	b := bound(hi)
	out.Trials, out.NeededTrials, out.OverCap, out.CapTV, out.BoundTV = hi, float64(hi), false, 0, &b
}

// planTest returns the test of rep that plan sizes: the one named test,
// else the finest (smallest minimum detectable TV).
func planTest(rep Report, test string) (check.Test, error) {
	if len(rep.Tests) == 0 {
		return check.Test{}, fmt.Errorf("plan: the check ran no test")
	}
	if test == "" {
		best := rep.Tests[0]
		for _, t := range rep.Tests[1:] {
			if t.MinDetTV < best.MinDetTV {
				best = t
			}
		}
		return best, nil
	}
	var names []string
	for _, t := range rep.Tests {
		if t.Name == test {
			return t, nil
		}
		names = append(names, fmt.Sprintf("%q", t.Name))
	}
	return check.Test{}, diag.Param("test", " %q is not a test of this check; its tests: %s", test, strings.Join(names, ", "))
}
