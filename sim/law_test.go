package sim_test

import (
	"errors"
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestEmptyResidualIsAnError: a rejection of positive mass with p = q
// (an empty residual) is a data condition, returned as ErrEmptyResidual
// without touching the law; a zero mass is no error.
func TestEmptyResidualIsAnError(t *testing.T) {
	p := sim.F64([]float64{0.25, 0.75})
	var l sim.Law
	l.Reset(1, 2)
	if err := l.AddResidual(0, 0, 1, p, p); err != nil {
		t.Errorf("zero mass: %v", err)
	}
	err := l.AddResidual(0, 0.5, 1, p, p)
	if !errors.Is(err, sim.ErrEmptyResidual) {
		t.Fatalf("positive mass on an empty residual: got %v, want ErrEmptyResidual", err)
	}
	if l.Total() != 0 {
		t.Errorf("the law changed: total %g", l.Total())
	}
	var tl sim.TreeLaw
	tl.Reset(1, 2)
	if err := tl.AddVec(0, 0.5, []float64{0, 0}); !errors.Is(err, sim.ErrEmptyResidual) {
		t.Errorf("tree law on an empty row: got %v, want ErrEmptyResidual", err)
	}
}
