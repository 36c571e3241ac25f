package experiments

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/specsim/specsim/algos"
)

// Every lossy setting lies on or below the frontier (water-filled
// mentored decoding), on the pools and on the Markov pairs, and below
// mentored decoding in every context; mentored with one D everywhere lies
// below the frontier too; the frontier's own rows increase and are
// concave in KL.
func TestLossyFrontier(t *testing.T) {
	e, err := Lookup("lossy-frontier")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := RunAll(context.Background(), e, Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sweeps := 0
	for _, sw := range FrontierSweeps() {
		sweeps += len(sw.Values)
	}
	cells, _ := e.Cells(Config{})
	ruleRows := 0
	strict := map[string]float64{"lenience": 1, "lenience-residual-p": 1, "mentored": 0, "cascade-chow": 0, "cascade-diff": -1, "cascade-opt": -1, "fuzzy": 0}
	curve := map[string][][2]float64{}
	for _, r := range rows {
		rule, src := r.String("rule"), r.String("source")
		val, _ := r.Float("value")
		kl, _ := r.Float("kl")
		acc, _ := r.Float("acceptance")
		if r.String("kind") == "frontier" {
			key := src + r.String("V") + r.String("quality")
			curve[key] = append(curve[key], [2]float64{kl, acc})
			continue
		}
		ruleRows++
		gap, _ := r.Float("gap")
		if dom, _ := r.Get("dominated"); dom != true || gap < -frontierTol {
			t.Errorf("%s %s %s=%g: above the frontier by %g", src, rule, r.String("param"), val, -gap)
		}
		if dom, _ := r.Get("dominated_per_context"); dom != true {
			t.Errorf("%s %s %s=%g: above mentored in some context", src, rule, r.String("param"), val)
		}
		front, _ := r.Float("frontier_acceptance")
		uni, _ := r.Float("uniform_acceptance")
		per, _ := r.Float("mentored_acceptance")
		if uni > front+frontierTol || per > front+frontierTol {
			t.Errorf("%s %s=%g: one-D mentored %g or the per-context bound %g above the frontier %g", src, rule, val, uni, per, front)
		}
		if s, ok := strict[rule]; ok && s == val && kl > 1e-12 {
			t.Errorf("%s at its strict point %g has KL %g on %s", rule, val, kl, src)
		}
		// Mentored's own points: one D everywhere is the one-D curve at
		// its own KL, up to the √D growth of R(D) near D = 0 acting on a
		// rounding-level KL (~1e-16 at D = 0 gives ~1e-8).
		if rule == "mentored" && math.Abs(uni-acc) > 1e-7 {
			t.Errorf("%s mentored D=%g: acceptance %g, one-D mentored at its KL %g", src, val, acc, uni)
		}
		if rule == "lenience" || rule == "lenience-residual-p" {
			if mr, _ := r.Float("max_ratio"); mr > 1/val+1e-9 {
				t.Errorf("%s %s l=%g: max π/p = %g > 1/l", src, rule, val, mr)
			}
		}
	}
	if ruleRows != sweeps*len(cells) {
		t.Fatalf("%d rule rows, want %d", ruleRows, sweeps*len(cells))
	}
	if len(curve) != len(cells) {
		t.Fatalf("frontier rows for %d cells, want %d", len(curve), len(cells))
	}
	for key, pts := range curve {
		for i := 1; i < len(pts); i++ {
			if pts[i][0] < pts[i-1][0] || pts[i][1] < pts[i-1][1]-1e-12 {
				t.Errorf("%s: frontier decreases between %v and %v", key, pts[i-1], pts[i])
			}
			if i > 1 && pts[i][0] > pts[i-2][0] {
				// concave: the middle point is on or above the chord
				x0, y0, x1, y1, x2, y2 := pts[i-2][0], pts[i-2][1], pts[i-1][0], pts[i-1][1], pts[i][0], pts[i][1]
				if chord := y0 + (y2-y0)*(x1-x0)/(x2-x0); y1 < chord-1e-9 {
					t.Errorf("%s: frontier below its chord at KL %g (%g < %g)", key, x1, y1, chord)
				}
			}
		}
	}
}

func TestLenienceTable(t *testing.T) {
	e, err := Lookup("lenience-table")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := RunAll(context.Background(), e, Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 16 {
		t.Fatalf("%d rows, want 16", len(rows))
	}
	got := map[string][]float64{}
	for _, r := range rows {
		a, _ := r.Float("alpha")
		got[r.String("draft")] = append(got[r.String("draft")], a)
		if c, _ := r.Get("covered"); c != true {
			t.Errorf("draft %s l=%s: formula %g outside the Monte Carlo interval [%s, %s]", r.String("draft"), r.String("l"), a, r.String("ci_lo"), r.String("ci_hi"))
		}
	}
	for d, a := range got {
		t.Logf("%-12s %.3f %.3f %.3f %.3f  (paper %v)", d, a[0], a[1], a[2], a[3], Table5[d])
		for i := 1; i < 4; i++ {
			if !(a[i] > a[i-1]) {
				t.Errorf("%s: α_l not increasing as l falls: %v", d, a)
			}
		}
	}
	// Table 5's l = 1 ordering: unigram < bigram < close-small < close-base.
	order := []string{"unigram", "bigram", "close-small", "close-base"}
	for i := 1; i < len(order); i++ {
		if !(got[order[i]][0] > got[order[i-1]][0]) {
			t.Errorf("l = 1 column out of order: %s %g <= %s %g", order[i], got[order[i]][0], order[i-1], got[order[i-1]][0])
		}
	}
}

// lossy-frontier's rows keep the published table's order: the rules of
// frontierOrder first, in that order (each a registered rule with a
// Frontier grid), then any other rule with one.
func TestFrontierOrder(t *testing.T) {
	var got []string
	for _, sw := range FrontierSweeps() {
		got = append(got, sw.Rule)
	}
	if len(got) < len(frontierOrder) || !slices.Equal(got[:len(frontierOrder)], frontierOrder) {
		t.Errorf("FrontierSweeps order %v, want %v first", got, frontierOrder)
	}
	for _, name := range frontierOrder {
		if e, err := algos.Lookup(name); err != nil || e.Frontier == nil {
			t.Errorf("frontierOrder names %s, which has no Frontier grid (%v)", name, err)
		}
	}
}
