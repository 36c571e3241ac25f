package algos

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"gonum.org/v1/gonum/stat/distmv"
)

func randDist(t *testing.T, seed uint64, v int, a float64) []float64 {
	t.Helper()
	alpha := make([]float64, v)
	for i := range alpha {
		alpha[i] = a
	}
	p := distmv.NewDirichlet(alpha, sim.NewRand(seed, sim.StreamID("bound-test", uint64(v)))).Rand(nil)
	sim.Normalize(p)
	return p
}

// k = 1: α* = Σ min(p, q) = β (Leviathan et al., arXiv 2211.17192,
// Thm 3.5), by both methods and both draft laws.
func TestOptimalAcceptanceK1(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		p, q := randDist(t, seed, 6, 0.5), randDist(t, seed+100, 6, 0.5)
		want := sim.Alpha(p, q)
		for _, repl := range []bool{true, false} {
			ex, err := OptimalAcceptanceExhaustive(p, q, 1, repl)
			if err != nil {
				t.Fatal(err)
			}
			fl, err := OptimalAcceptanceFlow(p, q, 1, repl)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ex-want) > 1e-12 || math.Abs(fl-want) > 1e-12 {
				t.Errorf("seed %d repl %v: exhaustive %.15g, flow %.15g, want Σmin = %.15g", seed, repl, ex, fl, want)
			}
		}
	}
}

// The exhaustive min-cut search and the max-flow agree wherever both run
// (max-flow = min-cut), up to 1e-12.
func TestOptimalAcceptanceMethodsAgree(t *testing.T) {
	for _, c := range []struct{ v, k int }{{3, 2}, {4, 3}, {5, 2}, {6, 4}, {8, 3}, {12, 2}, {20, 2}} {
		for _, repl := range []bool{true, false} {
			p, q := randDist(t, uint64(c.v*10+c.k), c.v, 0.4), randDist(t, uint64(c.v*10+c.k+1000), c.v, 0.4)
			ex, err := OptimalAcceptanceExhaustive(p, q, c.k, repl)
			if err != nil {
				t.Fatal(err)
			}
			fl, err := OptimalAcceptanceFlow(p, q, c.k, repl)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ex-fl) > 1e-12 {
				t.Errorf("V=%d k=%d repl=%v: exhaustive %.15g vs flow %.15g", c.v, c.k, repl, ex, fl)
			}
		}
	}
}

// Closed forms: k draws without replacement covering the whole support
// accept p(supp q); p = q accepts 1; with replacement α* grows with k and
// stays below the without-replacement value (Hu et al. §5.3).
func TestOptimalAcceptanceIdentities(t *testing.T) {
	p := []float64{0.1, 0.2, 0.3, 0.4}
	q := []float64{0.5, 0.5, 0, 0}
	got, err := OptimalAcceptance(p, q, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-0.3) > 1e-15 {
		t.Errorf("WOR covering the support: %.17g, want p(supp q) = 0.3", got)
	}
	if got, _ := OptimalAcceptance(p, p, 3, true); math.Abs(got-1) > 1e-15 {
		t.Errorf("p = q: %.17g, want 1", got)
	}
	p, q = randDist(t, 9, 7, 0.3), randDist(t, 10, 7, 0.3)
	prevR := 0.0
	for k := 1; k <= 5; k++ {
		r, _ := OptimalAcceptance(p, q, k, true)
		w, _ := OptimalAcceptance(p, q, k, false)
		if r < prevR-1e-15 || r > w+1e-12 {
			t.Errorf("k=%d: with replacement %.15g (previous %.15g), without %.15g", k, r, prevR, w)
		}
		prevR = r
	}
}

// Bad input is an error naming the field.
func TestOptimalAcceptanceErrors(t *testing.T) {
	if _, err := OptimalAcceptance([]float64{0.5, 0.5}, []float64{1}, 2, true); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := OptimalAcceptance([]float64{0.5, 0.5}, []float64{0.5, 0.5}, 0, true); err == nil {
		t.Error("k = 0 accepted")
	}
	big := make([]float64, 21)
	for i := range big {
		big[i] = 1.0 / 21
	}
	if _, err := OptimalAcceptanceExhaustive(big, big, 2, true); err == nil {
		t.Error("V = 21 accepted by the exhaustive search")
	}
	if got, err := OptimalAcceptance(big, big, 2, true); err != nil || math.Abs(got-1) > 1e-12 {
		t.Errorf("V = 21 by max-flow: %v, %v; want 1", got, err)
	}
}

// The three-symbol toy of Khisti et al. (arXiv 2410.18234, Fig. 2) at
// q2 = 0.1, k = 2. By hand: with replacement the minimising set is
// A = {1}: 1 - 1/3 + 1 - 0.9² = 0.856667; without replacement
// Pr(1 ∉ S) = q0 q2 (1/(1-q0) + 1/(1-q2)) = 0.719231, so
// α* = 2/3 + 1 - 0.719231 = 0.947436.
func ExampleOptimalAcceptance() {
	p := []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}
	q := []float64{1.0 / 3, 0.1, 2.0/3 - 0.1}
	for _, repl := range []bool{true, false} {
		a, _ := OptimalAcceptance(p, q, 2, repl)
		fmt.Printf("replacement=%v: %.6f\n", repl, a)
	}
	// Output:
	// replacement=true: 0.856667
	// replacement=false: 0.947436
}
