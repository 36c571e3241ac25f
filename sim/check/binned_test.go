package check_test

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/stattest"
)

// TestRatioCells: each token lands in the cell of q/p (edges inclusive
// above), p = 0 in cell 0, and the cells' p-masses are normalised.
func TestRatioCells(t *testing.T) {
	p := sim.F32([]float32{0, 0.1, 0.2, 0.3, 0.4})
	q := sim.F32([]float32{0.5, 0.025, 0.2, 0.21, 0.025})
	// q/p: -, 0.25, 1, 0.7, 0.0625; edges 0.25, 0.5, 0.8, 1, ...
	want := []int{0, 1, 4, 3, 1}
	for tok, c := range want {
		if got := check.RatioCell(p, q, tok); got != c {
			t.Errorf("token %d: cell %d, want %d", tok, got, c)
		}
	}
	probs := make([]float64, len(check.RatioEdges)+2)
	check.RatioCells(probs, p, q)
	exp := map[int]float64{1: 0.5, 3: 0.3, 4: 0.2}
	for c, v := range probs {
		if math.Abs(v-exp[c]) > 1e-7 {
			t.Errorf("cell %d: mass %g, want %g", c, v, exp[c])
		}
	}
	if n := len(check.RatioCellNames()); n != len(probs) {
		t.Errorf("%d names for %d cells", n, len(probs))
	}
}

// TestBinnedVerdicts: counts equal to their expectations give χ² = 0 and
// not_detected with the minimum detectable TV of 1000 draws on 1 degree
// of freedom; 1000 steps all landing in a cell of probability 0.1 give
// violated (χ² = 9000 on 1 degree of freedom); no steps give
// inconclusive. A greedy rule that emitted the argmax at all of 100 steps
// is not detected, with the off-argmax probability 1 - 0.1^(1/100) it
// would have shown with probability 0.9; one step off the argmax is
// violated.
func TestBinnedVerdicts(t *testing.T) {
	if r := check.NewRatioBinned().Test(0.001); r.Verdict != check.Inconclusive || r.MinDetectableTV != nil {
		t.Errorf("empty: %+v", r)
	}
	probs := make([]float64, len(check.RatioEdges)+2)
	probs[1], probs[2] = 0.9, 0.1
	ok, bad := check.NewRatioBinned(), check.NewRatioBinned()
	for i := range 1000 {
		c := 1
		if i%10 == 0 {
			c = 2
		}
		ok.Add(probs, c)
		bad.Add(probs, 2)
	}
	r := ok.Test(0.001)
	if r.Verdict != check.NotDetected || r.Stat > 1e-9 || r.DF != 1 || r.Level != 0.001 || r.Power != check.DefaultPower {
		t.Errorf("exact counts: %+v", r)
	}
	if want := stattest.MinDetectableTV(1000, 1, 0.001, check.DefaultPower); r.MinDetectableTV == nil || *r.MinDetectableTV != want {
		t.Errorf("exact counts: min detectable TV %v, want %v", r.MinDetectableTV, want)
	}
	if r := bad.Test(0.001); r.Verdict != check.Violated || math.Abs(r.Stat-9000) > 1e-6 {
		t.Errorf("all in the 0.1 cell: %+v", r)
	}
	g := check.NewGreedyBinned()
	for range 100 {
		g.Add(check.GreedyProbs, 0)
	}
	r = g.Test(0.001)
	if want := 1 - math.Pow(0.1, 0.01); r.Verdict != check.NotDetected || r.MinDetectableTV == nil || math.Abs(*r.MinDetectableTV-want) > 1e-12 {
		t.Errorf("greedy, argmax emitted: %+v, want not_detected with %v", r, want)
	}
	g.Add(check.GreedyProbs, 1)
	if r := g.Test(0.001); r.Verdict != check.Violated {
		t.Errorf("greedy, one step off the argmax: %+v", r)
	}
}
