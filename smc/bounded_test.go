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
