package check

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/sim/stattest"
)

// StatedTVBound returns an upper bound on the minimum detectable TV that
// the same check of n trials would state for r's test name, a prefix
// test in re-drawn cells (hashed.go), computed from the family's layout
// at n without running it: the test counts one transform per counted
// trial, n_i = ⌈n/K⌉ (K = AutoLawEvery), and each (draw, cell) group with
// counts adds at most B_i - 1 degrees of freedom, so its degrees of
// freedom are at most Σ_draws min(L_i, counted trials of the draw)·(B_i -
// 1); the minimum detectable TV, sqrt(λ(DF)/(4 n_i)), grows with DF, and
// the bound takes r's level share (r's number of tests; a check of n
// trials of the same configuration has the same tests). ok is false for
// any other test, and where r's own test does not fit the formula at r's
// size (a test counting fewer transforms than the counted trials, as a
// sampler whose rounds skip the count would give).
func (r Result) StatedTVBound(name string, n int64) (tv float64, ok bool) {
	l0 := r.prefix
	if l0 == nil || n < 1 {
		return 0, false
	}
	for i := range l0.g1 {
		if name != prefixTestName(i) {
			continue
		}
		for _, t := range r.Tests {
			if t.Name != name {
				continue
			}
			n0, df0 := l0.prefixBound(i, r.Trials)
			if t.N != n0 || t.DF > df0 {
				return 0, false
			}
			l := newHashedLayout(l0.g1-1, l0.v, l0.nc, n, l0.seed, l0.cross)
			nn, df := l.prefixBound(i, n)
			if df < 1 {
				return math.Inf(1), true
			}
			return stattest.MinDetectableTV(nn, df, t.LevelShare, r.Power), true
		}
	}
	return 0, false
}

// prefixBound returns the transforms the prefix test of position i of a
// check of n trials laid out as l counts, and the most degrees of freedom
// its groups can have.
func (l *hashedLayout) prefixBound(i int, n int64) (count int64, df int) {
	multiples := func(x int64) int64 { return (x + l.every - 1) / l.every } // of every in [0, x)
	for e := range int64(l.epochs) {
		c := multiples(min(n, (e+1)*l.epoch)) - multiples(e*l.epoch)
		count += c
		df += int(min(int64(l.labels[i]), c)) * (l.bins[i] - 1)
	}
	return count, df
}

// prefixTestName is the name of the prefix test of position i (from 0).
func prefixTestName(i int) string {
	return fmt.Sprintf("position %d given its context and prefix (re-drawn cells)", i+1)
}
