package source_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

func TestSourceErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ spec, want string }{
		{"", "missing kind"},
		{"nope:V=3", "unknown kind"},
		{"markov:V=3,V=4", "given twice"},
		{"markov:V", "not key=value"},
		{"markov:V=x", "not an integer"},
		{"markov:V=1", "V = 1"},
		{"markov:quality=2", "quality"},
		{"markov:bogus=1", "unknown key"},
		{"dirichlet:beta=0", "beta"},
		{"dirichlet:a=-1", "concentration"},
		{"dirichlet:V=100,beta=0.001", "raise beta"},
		{"temperature:T=0", "temperature"},
		{"zipf:s=nan", "finite"},
	} {
		_, err := source.New(c.spec, 2, 1, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSource(%q) = %v, want an error mentioning %q", c.spec, err, c.want)
		}
	}
}

// TestDirichletCalibration: the pool's mean Σmin(p,q) over its draft rows
// is the target within the calibration tolerance (1e-4) plus float32
// storage rounding.
func TestDirichletCalibration(t *testing.T) {
	t.Parallel()
	for _, beta := range []float64{0.3, 0.7, 0.9} {
		src := newSource(t, "dirichlet:V=2000,a=0.1,contexts=4,beta="+ftoa(beta), 3, 5)
		pl, _ := sim.PoolOf(src)
		s := 0.0
		for c := 0; c < pl.Contexts; c++ {
			for i := 0; i < pl.Gamma; i++ {
				p, q := sim.Float64s(nil, pl.PRow(c, i)), sim.Float64s(nil, pl.QRow(c, i))
				s += sim.Alpha(p, q)
			}
		}
		if got := s / float64(pl.Contexts*pl.Gamma); math.Abs(got-beta) > 2e-4 {
			t.Errorf("beta %g: mean Σmin(p,q) = %.6f", beta, got)
		}
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// newSource builds a source the test expects to be valid.
func newSource(t testing.TB, spec string, gamma int, seed uint64) sim.Source {
	t.Helper()
	src, err := source.New(spec, gamma, seed, 0)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestMarkovRows(t *testing.T) {
	t.Parallel()
	src := newSource(t, "markov:V=5,order=2,quality=0.3,seed=9", 2, 0)
	pair, _ := sim.PairOf(src)
	m := pair.P.(*sim.Markov)
	for s, r := range m.Rows {
		if err := sim.Validate("row", r); err != nil {
			t.Errorf("state %d: %v", s, err)
		}
	}
	// Order 2: p(.|ctx) depends only on the last two tokens.
	a, b := make([]float64, 5), make([]float64, 5)
	pair.P.Next([]int{0, 3, 1}, a)
	pair.P.Next([]int{4, 3, 1}, b)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("order-2 rows differ on the third-last token: %v vs %v", a, b)
		}
	}
}
