package plots

import (
	"slices"
	"testing"

	"gonum.org/v1/plot"
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
		{1e-12, 1, []string{"1e-12", "1e-10", "1e-8", "1e-6", "1e-4", "1e-2", "1e0"}}, // one format per axis
		{500, 2e6, []string{"1e3", "1e4", "1e5", "1e6"}},                              // it mixed 10000 and 1e5
		{2000, 60000, []string{"2000", "5000", "10000", "20000", "50000"}},
	} {
		if got := labels(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("[%g, %g]: labels %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	if ts := (logTicks{}).Ticks(0, 1); ts != nil {
		t.Errorf("a range reaching 0 gets ticks %v", ts)
	}
}

// TestUniformTickLabels: the linear axes' labels (cleanTicks) and a KL
// axis's decades (klTicks) come in one format per axis, and a KL axis of
// four or five decades labels every one.
func TestUniformTickLabels(t *testing.T) {
	labels := func(ts []plot.Tick) []string {
		var out []string
		for _, tk := range ts {
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
		{0, 2.5e5, []string{"0", "1e5", "2e5"}},
		{0, 40000, []string{"0", "20000", "40000"}},
		{0, 1.2e5, []string{"0", "5e4", "1e5"}},
	} {
		if got := labels(cleanTicks{plot.DefaultTicks{}}.Ticks(c.lo, c.hi)); !slices.Equal(got, c.want) {
			t.Errorf("linear [%g, %g]: labels %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	for _, c := range []struct {
		first, hi float64
		want      []string
	}{
		{1e-3, 2, []string{"0", "0.001", "0.01", "0.1", "1"}}, // it labelled 0.001 and 0.1 alone
		{1e-5, 0.5, []string{"0", "1e-5", "1e-4", "1e-3", "1e-2", "1e-1"}},
		{1e-7, 2, []string{"0", "1e-7", "1e-5", "1e-3", "1e-1"}},
	} {
		k := klTicks{zero: c.first / 30, first: c.first}
		if got := labels(k.Ticks(c.first/100, c.hi)); !slices.Equal(got, c.want) {
			t.Errorf("KL from %g to %g: labels %v, want %v", c.first, c.hi, got, c.want)
		}
	}
}
