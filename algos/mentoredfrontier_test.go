package algos

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// The curve's point at gap s is mentored decoding's solution at its own
// KL, and its slope there (a central difference of SolveMentored's
// acceptance) is 1/s.
func TestMentoredCurveSlope(t *testing.T) {
	rng := sim.NewRand(1, sim.StreamID("algos/mentored-curve"))
	for trial := range 40 {
		p, q := randPair(rng, 3+rng.IntN(30), trial%4)
		c, err := NewMentoredCurve(p, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []float64{0.05, 0.2, 0.5, 1, 3} {
			sol := c.AtGap(s)
			if sol.Outright {
				continue
			}
			// the gap is s, or s falls in a jump of the gap (a kink of the
			// curve, where a drops to 0 as the draft's p = 0 tokens start
			// being accepted) and the solution sits at the kink
			if sol.KL == 0 {
				// a kink at D = 0: where the draft's only tokens with
				// p < q have p = 0, the curve starts with a finite slope
				if first, _ := SolveMentored(p, q, 1e-9); (first.Acceptance-sol.Acceptance)/1e-9 > 1/s*(1+1e-3) {
					t.Errorf("trial %d, s = %g: D = 0 returned, but the curve starts steeper than 1/s", trial, s)
				}
				continue
			}
			if d := sol.B - sol.A; d > s*(1+1e-9) {
				t.Fatalf("trial %d: gap %g above %g", trial, d, s)
			}
			direct, err := SolveMentored(p, q, sol.KL)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(direct.Acceptance-sol.Acceptance) > 1e-10 {
				t.Errorf("trial %d, s = %g: acceptance %.15g, SolveMentored at its KL %.15g", trial, s, sol.Acceptance, direct.Acceptance)
			}
			// the slope: h small against D, large against rounding
			h := 1e-6 * sol.KL
			lo, _ := SolveMentored(p, q, sol.KL-h)
			hi, _ := SolveMentored(p, q, sol.KL+h)
			// a one-sided kink (a breakpoint) may sit inside [D-h, D+h]:
			// the slope then lies between the two one-sided ones
			left, right := (sol.Acceptance-lo.Acceptance)/h, (hi.Acceptance-sol.Acceptance)/h
			if want := 1 / s; want > left*(1+1e-3) || want < right*(1-1e-3) {
				t.Errorf("trial %d, s = %g: one-sided slopes %g and %g around 1/s = %g", trial, s, left, right, want)
			}
		}
	}
}

// The water-filled frontier is at least every allocation of the same
// average budget (random allocations and the equal one, which is
// mentored decoding with one D everywhere), within rounding, and about
// the best of them: no allocation found beats it, and the best found
// comes close.
func TestMentoredFrontierIsTheBestAllocation(t *testing.T) {
	rng := sim.NewRand(2, sim.StreamID("algos/mentored-frontier"))
	const tol = 1e-9
	for trial := range 12 {
		n := 2 + trial%3
		var ps, qs [][]float64
		w := make([]float64, n)
		for k := range n {
			p, q := randPair(rng, 4+rng.IntN(8), 0)
			ps, qs = append(ps, p), append(qs, q)
			w[k] = 0.2 + rng.Float64()
		}
		f, err := NewMentoredFrontier(ps, qs, w)
		if err != nil {
			t.Fatal(err)
		}
		wsum := 0.0
		for _, x := range w {
			wsum += x
		}
		r := func(k int, d float64) float64 {
			s, err := SolveMentored(ps[k], qs[k], d)
			if err != nil {
				t.Fatal(err)
			}
			return s.Acceptance
		}
		for _, b := range []float64{0.001, 0.01, 0.05, 0.2} {
			pt, err := f.At(b)
			if err != nil {
				t.Fatal(err)
			}
			if pt.KL > b*(1+1e-9) || (pt.KL < b*(1-1e-6) && pt.Acceptance < 1-1e-12) {
				t.Errorf("trial %d: At(%g) has average KL %g", trial, b, pt.KL)
			}
			equal := 0.0
			for k := range n {
				equal += w[k] / wsum * r(k, b)
			}
			if equal > pt.Acceptance+tol {
				t.Errorf("trial %d, B = %g: one D everywhere accepts %.12f > frontier %.12f", trial, b, equal, pt.Acceptance)
			}
			best := equal
			for range 300 {
				// a random allocation of the average budget b
				x := make([]float64, n)
				sx := 0.0
				for k := range x {
					x[k] = rng.ExpFloat64()
					sx += w[k] / wsum * x[k]
				}
				acc := 0.0
				for k := range n {
					acc += w[k] / wsum * r(k, b*x[k]/sx)
				}
				if acc > pt.Acceptance+tol {
					t.Errorf("trial %d, B = %g: allocation %v accepts %.12f > frontier %.12f", trial, b, x, acc, pt.Acceptance)
				}
				best = math.Max(best, acc)
			}
			if pt.Acceptance-best > 0.02 {
				t.Errorf("trial %d, B = %g: frontier %.4f, best allocation found %.4f: too far for 300 tries", trial, b, pt.Acceptance, best)
			}
		}
	}
}

// Every lossy rule's average acceptance is at most the frontier at its
// average KL (the per-context optimality of mentored decoding).
func TestLossyRulesBelowTheFrontier(t *testing.T) {
	rng := sim.NewRand(3, sim.StreamID("algos/mentored-frontier-rules"))
	var ps, qs [][]float64
	for range 6 {
		p, q := randPair(rng, 30, 0)
		ps, qs = append(ps, p), append(qs, q)
	}
	f, err := NewMentoredFrontier(ps, qs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range All() {
		if e.Frontier == nil {
			continue
		}
		for _, v := range e.Frontier.Values {
			rule, err := New(e.Name, e.Frontier.At(v))
			if err != nil {
				t.Fatal(err)
			}
			acc, kl := 0.0, 0.0
			for k := range ps {
				m, _, err := PositionMetrics(rule, ps[k], qs[k])
				if err != nil {
					t.Fatal(err)
				}
				acc += m.Acceptance / float64(len(ps))
				kl += m.KL / float64(len(ps))
			}
			if math.IsInf(kl, 1) {
				continue
			}
			pt, err := f.At(kl)
			if err != nil {
				t.Fatal(err)
			}
			if acc > pt.Acceptance+1e-9 {
				t.Errorf("%s %s = %g: acceptance %.12f above the frontier %.12f at KL %g", e.Name, e.Frontier.Param, v, acc, pt.Acceptance, kl)
			}
		}
	}
}

// The curve has no jump: where a token of tiny mass has the largest
// ratio (p = 1e-18, q = 2e-20: lost in the prefix sums, so that below a
// rejection mass of about 1e-16 the thresholds came out wrong and the
// budget jumped from 0.08 to KL(p‖q) within one step of the slope), D
// rises continuously with the gap to within 1e-9 of KL(p‖q).
func TestMentoredCurveTinyTail(t *testing.T) {
	p := []float64{0.5, 0.3, 0.2 - 1e-18, 1e-18}
	q := []float64{0.2, 0.5, 0.3 - 2e-20, 2e-20}
	c, err := NewMentoredCurve(p, q)
	if err != nil {
		t.Fatal(err)
	}
	prev := c.AtGap(0)
	for i := 1; i < 2000; i++ {
		sol := c.AtGap(c.maxGap * float64(i) / 2000)
		if sol.KL-prev.KL > 0.01 || sol.KL < prev.KL {
			t.Fatalf("D jumps from %g to %g at gap %g", prev.KL, sol.KL, c.maxGap*float64(i)/2000)
		}
		prev = sol
	}
	checkGapMonotone(t, c)
	if last := c.AtGap(c.maxGap * (1 - 1e-12)); math.Abs(last.KL-sim.KL(p, q)) > 1e-9 {
		t.Errorf("the steepest point has D = %.12g, KL(p‖q) = %.12g", last.KL, sim.KL(p, q))
	}
}

// The same on peaked rows of a large vocabulary, as the lossy frontier's
// pools have them (Dirichlet(0.1), V = 1000): many tokens of tiny mass
// with extreme ratios.
func TestMentoredCurvePeakedRows(t *testing.T) {
	rng := sim.NewRand(4, sim.StreamID("algos/mentored-curve-peaked"))
	row := func() []float64 {
		r := make([]float64, 1000)
		for i := range r {
			r[i] = sim.GammaRand(rng, 0.1)
		}
		sim.Normalize(r)
		return r
	}
	for trial := range 8 {
		// the draft: the target's row to a power times an independent
		// one, so that tiny tokens of both carry extreme ratios
		p, q := row(), row()
		for i := range q {
			q[i] = math.Pow(p[i], 0.8) * math.Pow(q[i], 0.2)
		}
		sim.Normalize(q)
		c, err := NewMentoredCurve(p, q)
		if err != nil {
			t.Fatal(err)
		}
		checkGapMonotone(t, c)
		// gaps spaced evenly in log from 1e-8 of the steepest to it
		prev := c.AtGap(0)
		for i := 0; i < 4000; i++ {
			s := c.maxGap * math.Pow(10, -8+8*float64(i)/3999)
			sol := c.AtGap(s)
			if sol.KL-prev.KL > 0.02 || sol.KL < prev.KL {
				t.Fatalf("trial %d: D jumps from %g to %g at gap %g of %g", trial, prev.KL, sol.KL, s, c.maxGap)
			}
			prev = sol
		}
	}
}

// checkGapMonotone checks that the threshold gap b - a the curve reads
// never increases with the rejection mass m, over m spaced evenly in log
// from the curve's floor to its largest (the bisection of AtGap relies on
// it; below about 1e-16 the prefix sums' rounding made the gap dip), and
// that the searches' reading without the KL has the full solution's
// thresholds and gap bit for bit.
func checkGapMonotone(t *testing.T, c *MentoredCurve) {
	t.Helper()
	lo, hi := math.Log(curveFloor), math.Log(c.sc.mMax)
	prev := math.Inf(1)
	for i := range 400 {
		m := math.Exp(lo + (hi-lo)*float64(i)/399)
		_, g := c.at(m)
		if g0 := c.gap(m); math.Float64bits(g0) != math.Float64bits(g) {
			t.Fatalf("at m = %g the gap-only reading is %v; the full solution's %v", m, g0, g)
		}
		if g > prev*(1+1e-9) {
			t.Fatalf("gap %g at m = %g after %g below it", g, m, prev)
		}
		prev = g
	}
}

// TestMentoredFrontierWalksAgain: the points a frontier's searches keep
// (each curve's gap search, and the search on the common gap) change no
// answer: budgets and gaps asked in any order, after any others, give bit
// for bit what a fresh frontier gives for each alone.
func TestMentoredFrontierWalksAgain(t *testing.T) {
	rng := sim.NewRand(3, sim.StreamID("algos/mentored-frontier-walk"))
	var ps, qs [][]float64
	for range 5 {
		p, q := randPair(rng, 30+rng.IntN(40), 0)
		ps, qs = append(ps, p), append(qs, q)
	}
	kept, err := NewMentoredFrontier(ps, qs, nil)
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, got, want FrontierPoint) {
		t.Helper()
		bits := math.Float64bits
		if bits(got.KL) != bits(want.KL) || bits(got.Acceptance) != bits(want.Acceptance) || bits(got.Gap) != bits(want.Gap) || len(got.D) != len(want.D) {
			t.Fatalf("%s: (KL %v, R %v, gap %v) after other searches, (%v, %v, %v) alone", what, got.KL, got.Acceptance, got.Gap, want.KL, want.Acceptance, want.Gap)
		}
		for k := range want.D {
			if bits(got.D[k]) != bits(want.D[k]) {
				t.Fatalf("%s: D[%d] = %v after other searches, %v alone", what, k, got.D[k], want.D[k])
			}
		}
	}
	budgets := []float64{0.3, 0.01, 0.0101, 0.2, 0, 0.05, 0.0499, 1e-6, 0.3, 5}
	for i, b := range budgets {
		fresh, _ := NewMentoredFrontier(ps, qs, nil)
		want, err := fresh.At(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := kept.At(b)
		if err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprintf("At(%g), ask %d", b, i), got, want)
		got.D[0] = -1 // the caller's copy: the kept points must not change
		s := float64(i) / float64(len(budgets)) * kept.maxGap
		fresh, _ = NewMentoredFrontier(ps, qs, nil)
		same(fmt.Sprintf("AtGap(%g)", s), kept.AtGap(s), fresh.AtGap(s))
	}
}
