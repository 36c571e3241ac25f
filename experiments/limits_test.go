package experiments

import (
	"errors"
	"math"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

// Scaled trial counts never wrap: the product saturates at sim.MaxTrials
// (it used to become 1 at --scale ≥ 4.6e14), and CheckScale refuses
// scales that are not positive, not finite or above MaxScale.
func TestTrialsAndScaleLimits(t *testing.T) {
	for _, c := range []struct {
		scale float64
		n     int64
		want  int64
	}{
		{1, 100000, 100000}, {0, 7, 7}, {0.5, 3, 1}, {MaxScale, 1000000, sim.MaxTrials},
		{5e14, 20000, sim.MaxTrials}, {1e300, 1, sim.MaxTrials}, {math.Inf(1), 5, sim.MaxTrials},
	} {
		if got := (Config{Scale: c.scale}).Trials(c.n); got != c.want {
			t.Errorf("Trials(%d) at scale %g = %d, want %d", c.n, c.scale, got, c.want)
		}
	}
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1), 1e12, 4.6e14, MaxScale * 1.01} {
		if err := CheckScale("--scale", s); !errors.Is(err, diag.ErrUsage) {
			t.Errorf("CheckScale(%g) = %v, want a usage error", s, err)
		}
	}
	for _, s := range []float64{1e-6, 1, MaxScale} {
		if err := CheckScale("--scale", s); err != nil {
			t.Errorf("CheckScale(%g) = %v", s, err)
		}
	}
	if err := sim.CheckTrials("--trials", 9e13); err == nil {
		t.Error("CheckTrials(9e13) passed")
	}
	if err := sim.CheckTrials("--trials", sim.MaxTrials); err != nil {
		t.Error(err)
	}
}
