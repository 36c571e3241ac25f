package stattest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The statistic by hand on a 2×2 table: margins (30, 70) and (40, 60) of
// 100, expected (12, 18; 28, 42), X² = 4/12 + 4/18 + 4/28 + 4/42, one
// degree of freedom.
func TestIndependenceByHand(t *testing.T) {
	t.Parallel()
	r, err := Independence{Obs: []int64{10, 20, 30, 40}, Rows: 2, Cols: 2}.Test(0)
	if err != nil {
		t.Fatal(err)
	}
	want := 4.0/12 + 4.0/18 + 4.0/28 + 4.0/42
	if math.Abs(r.Stat-want) > 1e-12 || r.DF != 1 || r.N != 100 {
		t.Errorf("X² = %.15g, DF %d, N %d; want %.15g, 1, 100", r.Stat, r.DF, r.N, want)
	}
	if _, err := (Independence{Obs: []int64{1, 2, 3}, Rows: 2, Cols: 2}).Test(0); err == nil {
		t.Error("a 2×2 table of 3 counts was accepted")
	}
}

// Margins far from uniform do not move the statistic: a table that is
// exactly the product of its margins has X² = 0, where a goodness-of-fit
// test against uniform cells would reject at any level.
func TestIndependenceIgnoresMargins(t *testing.T) {
	t.Parallel()
	rows, cols := []int64{1, 2, 7}, []int64{5, 1, 3, 1}
	var obs []int64
	for _, a := range rows {
		for _, b := range cols {
			obs = append(obs, 100*a*b)
		}
	}
	r, err := Independence{Obs: obs, Rows: 3, Cols: 4}.Test(0)
	if err != nil || r.Stat > 1e-9 || r.DF != 6 || r.PValue < 0.999 {
		t.Errorf("product table: X² = %g, DF %d, p = %g, err %v; want 0, 6, 1", r.Stat, r.DF, r.PValue, err)
	}
}

// sampleTable draws n pairs from the joint law pi (rows×cols, row-major).
func sampleTable(rng *rand.Rand, pi []float64, n int) []int64 {
	obs := make([]int64, len(pi))
	for range n {
		u, c := rng.Float64(), 0.0
		k := len(pi) - 1
		for i, p := range pi {
			if c += p; u < c {
				k = i
				break
			}
		}
		obs[k]++
	}
	return obs
}

// Calibration and power on 4×4 tables of n = 2,000 pairs, seeded. Under
// independence with skewed margins the test rejects at level 0.01 in at
// most 12 of 400 runs (the count is Binomial(400, 0.01), mean 4; P(> 12)
// < 1e-3). A dependence planted at the TV that MinDetectableTV(n, 9,
// 0.01, 0.9) states, in the quantity it bounds (TV between the joint law
// and the product of its margins, margins kept), is detected in at least
// 80 of 100 runs (the claim is 0.9; 80 is more than 3 binomial standard
// deviations below 90).
func TestIndependenceCalibrationAndPower(t *testing.T) {
	t.Parallel()
	const n = 2000
	a, b := []float64{0.4, 0.3, 0.2, 0.1}, []float64{0.1, 0.2, 0.3, 0.4}
	prod := make([]float64, 16)
	for i := range 4 {
		for j := range 4 {
			prod[i*4+j] = a[i] * b[j]
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	false1 := 0
	for range 400 {
		r, _ := Independence{Obs: sampleTable(rng, prod, n), Rows: 4, Cols: 4}.Test(0)
		if r.PValue < 0.01 {
			false1++
		}
	}
	if false1 > 12 {
		t.Errorf("independent tables: %d of 400 rejected at level 0.01, want at most 12", false1)
	}
	// Plant ±ε on the corners of the 2×2 block at rows/cols 0-1: margins
	// unchanged, TV to the product = 2ε.
	tv := MinDetectableTV(n, 9, 0.01, 0.9)
	eps := tv / 2
	dep := append([]float64(nil), prod...)
	dep[0], dep[1], dep[4], dep[5] = dep[0]+eps, dep[1]-eps, dep[4]-eps, dep[5]+eps
	hits := 0
	for range 100 {
		r, _ := Independence{Obs: sampleTable(rng, dep, n), Rows: 4, Cols: 4}.Test(0)
		if r.PValue < 0.01 {
			hits++
		}
	}
	if hits < 80 {
		t.Errorf("dependence at the stated TV %.4g: detected %d of 100, want at least 80 (claimed 0.9)", tv, hits)
	}
	t.Logf("false alarms %d/400 at level 0.01; power %d/100 at TV %.4g", false1, hits, tv)
}

// TestSparseRows keeps the rows whose every cell expects at least
// minExpected, pools the others into one row and leaves that row out
// where it too falls short, and never merges neighbouring rows or
// columns. A 5×4 table: rows 0 and 1 are opposite (a deviation that
// merging them in a pair, as Test does, cancels), rows 2-4 hold one
// count each. N = 203, C = (51, 51, 51, 50): with minExpected 0.5 a row
// needs 203·0.5/50 = 2.03 counts, so rows 2-4 are pooled into (1, 1, 1,
// 0), which is kept (DF 6, N 203, 8 cells pooled); with minExpected 1 it
// needs 4.06, and the pool (3) is left out (DF 3, N 200, 12 cells).
func TestIndependenceSparseRows(t *testing.T) {
	t.Parallel()
	tab := Independence{Obs: []int64{40, 10, 40, 10, 10, 40, 10, 40, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, Rows: 5, Cols: 4}
	for _, c := range []struct {
		minExp     float64
		kept       []int64
		df, pooled int
		n          int64
	}{
		{0.5, []int64{40, 10, 40, 10, 10, 40, 10, 40, 1, 1, 1, 0}, 6, 8, 203},
		{1, []int64{40, 10, 40, 10, 10, 40, 10, 40}, 3, 12, 200},
	} {
		r, err := tab.TestSparseRows(c.minExp)
		if err != nil {
			t.Fatal(err)
		}
		want := pearsonIndependence(c.kept, len(c.kept)/4, 4)
		if r.Stat != want.Stat || r.DF != c.df || r.N != c.n || r.Pooled != c.pooled {
			t.Errorf("minExpected %g: X² %v, DF %d, N %d, pooled %d; want %v, %d, %d, %d", c.minExp, r.Stat, r.DF, r.N, r.Pooled, want.Stat, c.df, c.n, c.pooled)
		}
	}
	kept, _ := tab.TestSparseRows(1)
	if h, _ := tab.Test(1); h.Stat >= kept.Stat/10 {
		t.Errorf("merging neighbours kept X² %v of %v: the table does not show the cancellation", h.Stat, kept.Stat)
	}
}
