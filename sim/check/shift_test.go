package check_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/longtest"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/sim/stattest"
)

// The names of the rows-of-a-batch tests: adjacent rows, and rows half a
// batch apart, each of the first tokens and of every position, and
// adjacent rows' first tokens in re-drawn cells (hashed.go).
var crossNames = []string{
	"rows of a batch (independence, first tokens)",
	"rows of a batch (independence, every position)",
	"rows half a batch apart (independence, first tokens)",
	"rows half a batch apart (independence, every position)",
	"rows of a batch (independence, first tokens in re-drawn cells)",
}

// halfPower: rows j and j+B/2 of a batch coupled with exact marginals, at
// every position or at the first tokens only, planted at the stated
// minimum detectable TV of the half-shift test of that quantity, are
// detected with the stated power.
func halfPower(t *testing.T, n int, trials int64) {
	for _, first := range []bool{false, true} {
		name := "rows half a batch apart (independence, every position)"
		if first {
			name = "rows half a batch apart (independence, first tokens)"
		}
		gridPower(t, name, n, 2, func(eps float64) check.Stepper { return crossPlant{b: 16, m: 2, eps: eps, first: first, half: true} },
			check.Config{Trials: trials, Batch: 64, CrossRow: true})
	}
}

// TestHalfShiftPowerShort is the default-suite version of
// TestHalfShiftPower (50 seeds).
func TestHalfShiftPowerShort(t *testing.T) {
	t.Parallel()
	halfPower(t, 50, 6000)
}

// TestHalfShiftPower (opt-in, -prob or SPECSIM_LONG=1): 300 seeds.
func TestHalfShiftPower(t *testing.T) {
	if !*prob && !longtest.Enabled() {
		t.Skip("opt-in: go test ./sim/check -run 'TestHalfShiftPower$' -prob")
	}
	halfPower(t, 300, 20000)
}

// halfShared is token verification whose second half of a batch reuses
// the first half's uniforms (row j+B/2 takes row j's): each row's law is
// exact and adjacent rows are independent; rows half a batch apart are
// not. With independent every row draws its own.
type halfShared struct{ independent bool }

func (s halfShared) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	h := len(bs) / 2
	us := make([][2*sim.MaxGamma + 2]float64, len(bs))
	for r := range bs {
		for i := range us[r] {
			us[r][i] = rng.Float64()
		}
		if !s.independent && r >= h && r < 2*h {
			us[r] = us[r-h]
		}
		outs[r] = tokenWith(&bs[r], us[r][:])
	}
	return nil
}

// A sampler that reuses one half of the batch's uniforms for the other
// half is violated through the half-shift tests at batch 16 over 1,024
// contexts (the adjacent-row tests alone were 0 of 3 there), and the same
// sampler with independent rows is not flagged by any rows test.
func TestCrossRowHalfShared(t *testing.T) {
	t.Parallel()
	src, err := source.New("dirichlet:V=50,a=0.3,beta=0.7,contexts=1024", 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, independent := range []bool{false, true} {
		res, err := check.Check(context.Background(), src, check.Rule{Name: "half-shared", Steps: halfShared{independent}},
			check.Config{Trials: 20000, Seed: 3, Workers: 2, Batch: 16, CrossRow: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range crossNames {
			c := findTest(t, res, name)
			reject := c.PHolm < res.Level
			want := !independent && strings.HasPrefix(name, "rows half")
			if reject != want && (want || independent) {
				t.Errorf("independent rows %v: %s p_holm %.3g (min TV %.3g), want rejection %v", independent, name, c.PHolm, c.MinDetTV, want)
			}
		}
		if flagged := res.Verdict == check.Violated; flagged == independent {
			t.Errorf("independent rows %v: verdict %s", independent, res.Verdict)
		}
	}
}

// TestCrossRowFalseAlarms (opt-in, -prob or SPECSIM_LONG=1): on 400
// lossless runs with independent rows (token verification, batch 16 over
// 64 contexts) each rows-of-a-batch test rejects at raw level 0.01 no more
// often than Binomial(400, 0.01) allows with probability 1-1e-3.
func TestCrossRowFalseAlarms(t *testing.T) {
	if !*prob && !longtest.Enabled() {
		t.Skip("opt-in: go test ./sim/check -run 'TestCrossRowFalseAlarms$' -prob")
	}
	crossFalseAlarms(t, 400)
}

// TestCrossRowFalseAlarmsShort is the default-suite version of
// TestCrossRowFalseAlarms (40 runs).
func TestCrossRowFalseAlarmsShort(t *testing.T) {
	t.Parallel()
	crossFalseAlarms(t, 40)
}

func crossFalseAlarms(t *testing.T, n int) {
	src, err := source.New("dirichlet:V=50,a=0.3,beta=0.7,contexts=64", 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	const level = 0.01
	alarms := make([]int, len(crossNames))
	for s := 1; s <= n; s++ {
		res, err := check.Check(context.Background(), src, check.Rule{Name: "token", Steps: halfShared{independent: true}},
			check.Config{Trials: 4000, Seed: uint64(s), Workers: 1, Batch: 16, CrossRow: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range crossNames {
			if findTest(t, res, name).PValue < level {
				alarms[i]++
			}
		}
	}
	_, hi := stattest.BinomialAcceptance(n, level, 1e-3)
	for i, name := range crossNames {
		t.Logf("%s: %d of %d runs reject at level %g (at most %d allowed)", name, alarms[i], n, level, hi)
		if alarms[i] > hi {
			t.Errorf("%s: %d false alarms in %d runs at level %g; at most %d allowed", name, alarms[i], n, level, hi)
		}
	}
}
