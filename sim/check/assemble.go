package check

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// normalTest is a pending two-sided test by a standard normal statistic:
// the largest |z| of groups statistics, each the deviation of an
// estimated mean from its value under the hypothesis over its standard
// error; se is the largest standard error, in the units of the test's
// quantity.
type normalTest struct {
	z, se  float64
	groups int
	n      int64
}

// NormalTest is the pending two-sided test named name whose statistic z
// is the largest |z| over groups asymptotically standard normal
// statistics (one for a single mean), each (estimate − hypothesis)/se_g
// over n independent runs, with the Bonferroni correction across the
// groups: p = min(1, groups·2·Φ̄(|z|)). se is the largest se_g, in the
// units of quantity; the test's minimum detectable deviation at its Holm
// share s of the level is (z_{1−s/(2·groups)} + z_power)·se, the
// smallest deviation of any group's mean it detects with probability
// power. A z of ±Inf (a deviation with no spread) has p = 0.
func NormalTest(name, quantity string, z, se float64, groups int, n int64) Pending {
	return Pending{name: name, quantity: quantity, normal: &normalTest{z: z, se: se, groups: max(groups, 1), n: n}, total: math.Inf(1)}
}

// eval is the test at Holm share share with power power.
func (nt *normalTest) eval(t Test, share, power float64) Test {
	nrm := distuv.UnitNormal
	g := float64(nt.groups)
	t.Stat, t.Cells, t.N = nt.z, nt.groups, nt.n
	t.PValue = math.Min(1, g*2*nrm.Survival(math.Abs(nt.z)))
	t.MinDetTV = (nrm.Quantile(1-share/(2*g)) + nrm.Quantile(power)) * nt.se
	return t
}

// Assembled is a family of tests evaluated as one by Assemble: each test at
// its Holm share of the level, with its minimum detectable deviation
// there, and Holm's correction across them.
type Assembled struct {
	Tests        []Test
	Level, Power float64
	// PValue is the smallest Holm-adjusted p (1 when there is no test).
	PValue float64
	// Finest is the index of the test with the smallest minimum
	// detectable deviation (the first of equals; -1 when there is none).
	Finest int
	// Powerless says that some test could not have detected even a total
	// deviation in its quantity (a TV of 1 for a χ² test; a finite
	// deviation for a NormalTest).
	Powerless bool
}

// Assemble evaluates tests as one family at family-wise level level with
// power power (Evaluate) and finds the smallest adjusted p, the finest
// test and whether a test was powerless. It is the one assembly of a
// verdict's tests: check's (finish), a generation's and a replayed log's
// (package seq) and an SMC scheme's (package smc).
func Assemble(tests []Pending, level, power float64) (Assembled, error) {
	ts, err := Evaluate(tests, level, power)
	if err != nil {
		return Assembled{}, err
	}
	f := Assembled{Tests: ts, Level: level, Power: power, PValue: 1, Finest: -1}
	for i, t := range ts {
		f.PValue = math.Min(f.PValue, t.PHolm)
		if f.Finest < 0 || t.MinDetTV < ts[f.Finest].MinDetTV {
			f.Finest = i
		}
		total := tests[i].total
		if total == 0 {
			total = 1
		}
		f.Powerless = f.Powerless || !(t.MinDetTV < total)
	}
	return f, nil
}

// Rejects reports whether a test of the family rejects at its level.
func (f Assembled) Rejects() bool { return f.PValue < f.Level }

// FirstRejecting is the test of the smallest Holm-adjusted p.
func (f Assembled) FirstRejecting() Test {
	best := Test{PHolm: math.Inf(1)}
	for _, t := range f.Tests {
		if t.PHolm < best.PHolm {
			best = t
		}
	}
	return best
}

// RejectWords words test t, named name (a row kind's label included),
// rejecting at family-wise level level: the words every verdict uses.
func RejectWords(name string, t Test, level float64) string {
	return fmt.Sprintf("%s rejects (Holm-adjusted p = %.3g < %g; its quantity: %s)", name, t.PHolm, level, t.Quantity)
}

// BoundWords words a family of m tests at family-wise level level of
// which none rejected: no deviation from what was detected (over scope,
// when not empty: "over 1000 positions"), and the deviation in its
// quantity that the finest test would have detected with probability
// power at its Holm share share of the level.
func BoundWords(what, scope string, m int, level, power, share float64, finest Test) string {
	if scope != "" {
		scope = " " + scope
	}
	tests := "tests"
	if m == 1 {
		tests = "test"
	}
	return fmt.Sprintf("no deviation from %s detected by %d %s at family-wise level %g%s; the finest, %q, would have detected with probability %g, at its Holm share %.3g of the level, a deviation of %.3g in its quantity (%s)",
		what, m, tests, level, scope, finest.Name, power, share, finest.MinDetTV, finest.Quantity)
}

// Bound is BoundWords for the family f, its finest test named as it is.
func (f Assembled) Bound(what, scope string) string {
	if f.Finest < 0 {
		return "inconclusive: no test ran"
	}
	t := f.Tests[f.Finest]
	return BoundWords(what, scope, len(f.Tests), f.Level, f.Power, t.LevelShare, t)
}
