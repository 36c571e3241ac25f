package plots

import (
	"slices"
	"testing"
)

// logTicks labels at least three values on any log range, and labels
// exactly the values it should.
func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Value < lo || tk.Value > hi {
				t.Errorf("[%g, %g]: tick %g outside the range", lo, hi, tk.Value)
			}
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{0.01, 0.3, []string{"0.01", "0.02", "0.05", "0.1", "0.2"}}, // the SMC panels had "0.1" alone
		{0.08, 0.35, []string{"0.08", "0.09", "0.1", "0.2", "0.3"}},
		{1e-4, 1, []string{"0.0001", "0.001", "0.01", "0.1", "1"}},
		{3, 70, []string{"5", "10", "20", "50"}},
		{1e-12, 1, []string{"1e-12", "1e-10", "1e-8", "1e-6", "0.0001", "0.01", "1"}},
		{500, 2e6, []string{"1000", "10000", "1e5", "1e6"}},
	} {
		if got := labels(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("[%g, %g]: labels %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	if ts := (logTicks{}).Ticks(0, 1); ts != nil {
		t.Errorf("a range reaching 0 gets ticks %v", ts)
	}
}
