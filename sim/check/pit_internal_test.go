package check

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The randomised PIT is exactly uniform under the null: for y ~ p and
// V ~ U(0, 1), U = before(y) + V·p(y) puts mass exactly |bin| in every bin,
// because the intervals [before(y), before(y)+p(y)) tile [0, 1). The test
// computes each bin's mass as Σ_y |interval(y) ∩ bin| (the law of U, with
// no sampling) in both orders, and the table and the O(V) path agree
// (the pool tables hold float32, so to 1e-6).
func TestPITExactlyUniform(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, v := range []int{1, 2, 7, 50} {
		p := make([]float64, v)
		s := 0.0
		for i := range p {
			p[i] = rng.ExpFloat64()
			if i%3 == 1 {
				p[i] = p[i-1] // ties
			}
			s += p[i]
		}
		for i := range p {
			p[i] /= s
		}
		tb := newPITTable32(p)
		for o := range 2 {
			const bins = 13
			var mass [bins]float64
			for y := range p {
				lo, hi := float64(tb.before[o][y]), float64(tb.before[o][y])+p[y]
				for k := range bins {
					a, b := float64(k)/bins, float64(k+1)/bins
					mass[k] += max(0, min(hi, b)-max(lo, a))
				}
			}
			for k, m := range mass {
				if math.Abs(m-1.0/bins) > 1e-6 { // float32 tables
					t.Errorf("V = %d order %d: bin %d has mass %v, want %v", v, o, k, m, 1.0/bins)
				}
			}
		}
		for y := range p {
			w := rng.Float64()
			a1, b1 := tb.pit(y, w)
			a2, b2 := pitRow(p, y, w)
			if math.Abs(a1-a2) > 1e-6 || math.Abs(b1-b2) > 1e-6 {
				t.Errorf("V = %d, y = %d: table (%v, %v), row (%v, %v)", v, y, a1, b1, a2, b2)
			}
		}
	}
}

// The grids give every cell at least minPerBin expected trials and stay
// within their caps.
func TestPITLayout(t *testing.T) {
	for _, c := range []struct {
		g          int
		n          int64
		bins, b, k int
	}{
		{4, 200000, 256, 16, 4}, // 1e4 cells: 4^5 = 1024 fits, 5^5 is past the cap
		{4, 1000, 50, 7, 2},     // 50 cells: 7² = 49, 2^5 = 32
		{3, 100, 5, 2, 0},       // 5 cells: 2^4 = 16 does not fit
		{1, 10, 2, 2, 0},
	} {
		l := newPITLayout(c.g, c.n, 1, false)
		if l.bins != c.bins || l.pb != c.b || l.cb != c.k {
			t.Errorf("γ = %d, n = %d: B = %d, b = %d, c = %d; want %d, %d, %d", c.g, c.n, l.bins, l.pb, l.cb, c.bins, c.b, c.k)
		}
	}
}

// pitV is uniform: its mean and the fraction below 1/4 over 1e5 keys lie
// within 5 standard errors of 1/2 and 1/4.
func TestPITV(t *testing.T) {
	l := pitLayout{seed: 3}
	const n = 100000
	s, q := 0.0, 0
	for i := range int64(n) {
		v := l.pitV(i, int(i%5))
		if v < 0 || v >= 1 {
			t.Fatalf("V = %v outside [0, 1)", v)
		}
		s += v
		if v < 0.25 {
			q++
		}
	}
	if m := s / n; math.Abs(m-0.5) > 5*math.Sqrt(1.0/12/n) {
		t.Errorf("mean V = %v", m)
	}
	if f := float64(q) / n; math.Abs(f-0.25) > 5*math.Sqrt(0.25*0.75/n) {
		t.Errorf("P(V < 1/4) = %v", f)
	}
}

func TestOrdinal(t *testing.T) {
	for k, want := range map[int64]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 102: "102nd", 111: "111th"} {
		if got := ordinal(k); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", k, got, want)
		}
	}
}

// A result whose p-value is below the level but that has no tests (a
// verdict decided by a component alone) gets a claim, not a panic.
func TestClaimWithoutTests(t *testing.T) {
	r := Result{Verdict: Violated, Level: 0.01, PValue: 0, Mode: "lossless",
		Components: []Component{{Name: "determinism", Verdict: Violated, Detail: "seeded rows differ"}}}
	r.claim()
	if want := "violated: component determinism failed: seeded rows differ"; r.Claim != want {
		t.Errorf("claim %q, want %q", r.Claim, want)
	}
}
