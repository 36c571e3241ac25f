package smc

import (
	"math"
	"testing"
	"time"
)

// Issue 23: a tolerance float64 cannot reach is refused (1e-17 bisected
// for ever, NaN passed and gave a wrong verdict), and the bisection ends
// whatever the tolerance it is given, within float64's resolution of c*.
func TestBisectionBounded(t *testing.T) {
	t.Parallel()
	s, err := LookupScheme("fc-bisect")
	if err != nil {
		t.Fatal(err)
	}
	for _, tol := range []float64{1e-17, MinBisectTol / 2, math.NaN(), math.Inf(1), -1e-3, 1} {
		if err := (Config{N: 4, K: 2, BisectTol: tol}).Validate(s); err == nil {
			t.Errorf("tolerance %g accepted", tol)
		}
	}
	for _, tol := range []float64{0, MinBisectTol, 1e-12, 0.5} {
		if err := (Config{N: 4, K: 2, BisectTol: tol}).Validate(s); err != nil {
			t.Errorf("tolerance %g: %v", tol, err)
		}
	}
	w := []float64{0.5, 0.25, 0.125, 0.0625, 0.03125, 1e-300}
	want, _, _, _ := CStar(w, 3, nil)
	for _, tol := range []float64{0, 1e-300, MinBisectTol} {
		done := make(chan float64, 1)
		go func() { c, _ := CStarBisect(w, 3, tol, nil); done <- c }()
		select {
		case c := <-done:
			if !(c <= want) || want-c > 1e-12*want {
				t.Errorf("tol %g: c = %.17g, c* = %.17g", tol, c, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("tol %g: the bisection did not end", tol)
		}
	}
}

// Issue 23: when every run ends with Ẑ = 0 (z = −∞, zero spread) with
// particles alive, a correct scheme is not called violated: the runs
// support no verdict. A constant non-zero Ẑ ≠ Z (a deterministic bias)
// still is violated.
func TestJudgeAllZero(t *testing.T) {
	t.Parallel()
	zero := Stats{Runs: 200, ZeroRuns: 200, SizeMean: 1, SizeMin: 1, SizeMax: 1, Groups: []Group{{Label: "a", P: 0.5}, {Label: "b", P: 0.5}}}
	j := Judge(zero, nil, 8, 0.01, 0.9)
	if j.Verdict != Inconclusive || len(j.Reasons) != 1 {
		t.Errorf("all runs zero: %s %q", j.Verdict, j.Reasons)
	}
	biased := Stats{Runs: 200}
	biased.ZRatio.Mean, biased.ZRatio.N = 0.5, 200
	if j := Judge(biased, nil, 8, 0.01, 0.9); j.Verdict != Violated {
		t.Errorf("a constant Ẑ/Z = 0.5: %s", j.Verdict)
	}
}
