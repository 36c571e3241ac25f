package experiments

import (
	"math"
	"testing"
)

// The replay's KL headline says which steps it averages: the finite ones,
// counted, with the rest +Inf (the sample log's KL is finite at 13% of
// its steps; a bare mean over them read as the log's KL).
func TestReplayKLSaysItsSubset(t *testing.T) {
	for _, c := range []struct {
		p    PositionStats
		want string
	}{
		{PositionStats{Steps: 4000, KLInfinite: 3485, MeanKL: 1.229}, "KL 1.2290 over the 515 of 4000 steps (13%) where it is finite; +Inf at the other 3485"},
		{PositionStats{Steps: 10, MeanKL: 0.5}, "KL 0.5000 (all 10 steps)"},
		{PositionStats{Steps: 10, KLInfinite: 10, MeanKL: math.NaN()}, "KL +Inf at all 10 steps"},
		{PositionStats{Steps: 10, MeanKL: math.NaN()}, "KL n/a (not computed)"},
	} {
		if got := klText(c.p); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
