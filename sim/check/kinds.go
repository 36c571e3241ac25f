package check

import (
	"fmt"
	"math"
	"strings"

	"github.com/specsim/specsim/sim/run"
)

// Per row kind (Config.RowKinds). A composed pool (an external
// implementation's --rows) holds context c of its source under row kind
// c mod R: trial t, in context t mod contexts, is a row of kind
// (t mod contexts) mod R. Every test is also run on each kind's trials:
// the binned tests of a pool take the groups (contexts) of the kind, and
// the PIT and law tests count each kind apart — every round adds to its
// kind's counts only, and the pooled counts are their sum, so the
// per-kind report adds no work per trial. The cross-row tests, whose
// pairs span two kinds, and the prefix tests in re-drawn cells
// (hashed.go) are pooled only. The pooled tests and every
// kind's tests form one family: Holm's correction runs over all of them,
// so a kind named violated is named at the family-wise level.

// KindResult is the report of one row kind (Result.RowKinds).
type KindResult struct {
	// Kind is the row kind as --rows reads it.
	Kind string `json:"kind"`
	// Verdict is violated when a test of the kind's trials rejects (its
	// Holm-adjusted p below the level, in the family of every test) or
	// one of its outcomes is invalid; inconclusive when some test of the
	// kind could not detect even a total deviation; not_detected
	// otherwise; n/a for a kind the check left out (Note says why).
	Verdict string `json:"verdict"`
	// PHolm is the smallest Holm-adjusted p-value of the kind's tests
	// and MinDetTV their smallest minimum detectable TV (at the family's
	// share of the level, with the check's power).
	PHolm    float64 `json:"p_holm"`
	MinDetTV float64 `json:"min_detectable_tv"`
	Trials   int64   `json:"trials"`
	Invalid  int64   `json:"invalid_outcomes"`
	// MeanEmitted is the kind's tokens per step.
	MeanEmitted float64 `json:"mean_emitted"`
	Note        string  `json:"note,omitempty"`
	Tests       []Test  `json:"tests"`
}

// kindTally is one row kind's share of a chunk's counts.
type kindTally struct {
	// fams are the kind's states of the families kept per kind (nil for
	// the others).
	fams                []Family
	n, invalid, emitted int64
}

// kinds returns the number of row kinds the check reports apart (0:
// none; a single kind is the pooled report itself).
func (rn *runner) kinds() int {
	if len(rn.cfg.RowKinds) < 2 || rn.w.pool == nil {
		return 0
	}
	return len(rn.cfg.RowKinds)
}

// kindOf returns the row kind of round r.
func (rn *runner) kindOf(r *run.Round) int {
	return int(r.Trial%int64(rn.w.nc)) % len(rn.cfg.RowKinds)
}

// lawOff reports whether round r's kind is left out of the law test.
func (rn *runner) lawOff(r *run.Round) bool {
	return rn.cfg.LawKindsOff != nil && rn.cfg.LawKindsOff[rn.kindOf(r)] != ""
}

// newKinds adds the per-kind counts to a new tally.
func (rn *runner) newKinds(t *tally) {
	nk := rn.kinds()
	if nk == 0 {
		return
	}
	t.kinds = make([]kindTally, nk)
	for k := range t.kinds {
		t.kinds[k].fams = make([]Family, len(rn.fams))
		for i, f := range t.fams {
			if f.byKind() {
				t.kinds[k].fams[i] = rn.fams[i]()
			}
		}
	}
}

// record checks and counts one round, into its kind's counts when the
// check reports kinds apart.
func (rn *runner) record(t *tally, r *run.Round) error {
	if t.kinds == nil {
		return rn.record1(t, r)
	}
	t.kind = rn.kindOf(r)
	kt := &t.kinds[t.kind]
	inv, em := t.invalid, t.emitted
	err := rn.record1(t, r)
	kt.n++
	kt.invalid += t.invalid - inv
	kt.emitted += t.emitted - em
	return err
}

// mergeKinds adds src's per-kind counts into dst's.
func mergeKinds(dst, src *tally) {
	for k := range dst.kinds {
		d, s := &dst.kinds[k], &src.kinds[k]
		d.n += s.n
		d.invalid += s.invalid
		d.emitted += s.emitted
	}
}

// KindBytes bounds the memory of the per-kind counts of a check of
// trials trials at draft length gamma over kinds row kinds, for every
// accumulator alive at once (a merged tally and a chunk's, per worker):
// the PIT histograms and the law test's cell covariance of each kind.
func KindBytes(gamma int, trials int64, kinds, workers int) int64 {
	l := newPITLayout(gamma, trials, 0, true)
	c := l.newCounts()
	pit := int64(len(c.pos)+len(c.pair)+len(c.block)+len(c.cross)) * 8
	cells := int64((gamma+1)*maxLawTestBins + 2)
	law := (cells*cells + 2*cells) * 8
	return int64(kinds) * (pit + law) * int64(workers+1)
}

// kindTests is one kind's pending tests and counts.
type kindTests struct {
	name  string
	tests []Pending
	kt    kindTally
	off   string // why the kind was left out ("" when it was not)
}

// kindPending returns every kind's pending tests of the merged tally.
func (rn *runner) kindPending(t *tally) ([]kindTests, error) {
	var out []kindTests
	for k, kt := range t.kinds {
		var off string
		if rn.cfg.LawKindsOff != nil {
			off = rn.cfg.LawKindsOff[k]
		}
		ps, err := rn.tests(t, k)
		if err != nil {
			return nil, err
		}
		out = append(out, kindTests{name: rn.cfg.RowKinds[k], tests: ps, kt: kt, off: off})
	}
	return out, nil
}

// kindResults fills r.RowKinds from the kinds' evaluated tests (each
// kind's slice of the family, in order).
func kindResults(r *Result, level float64, kinds []kindTests, tests [][]Test) {
	for k, kp := range kinds {
		kr := KindResult{Kind: kp.name, PHolm: 1, MinDetTV: math.Inf(1), Trials: kp.kt.n, Invalid: kp.kt.invalid, Tests: tests[k], Note: kp.off}
		if kp.kt.n > 0 {
			kr.MeanEmitted = float64(kp.kt.emitted) / float64(kp.kt.n)
		}
		powerless := len(kr.Tests) == 0
		for _, t := range kr.Tests {
			kr.PHolm = math.Min(kr.PHolm, t.PHolm)
			kr.MinDetTV = math.Min(kr.MinDetTV, t.MinDetTV)
			powerless = powerless || !(t.MinDetTV < 1)
		}
		switch {
		case kr.PHolm < level || kr.Invalid > 0:
			kr.Verdict = Violated
		case kp.off != "" && len(kr.Tests) == 0:
			kr.Verdict = NotApplicable
		case powerless:
			kr.Verdict = Inconclusive
		default:
			kr.Verdict = NotDetected
		}
		r.RowKinds = append(r.RowKinds, kr)
	}
}

// violatedKinds names the row kinds whose verdict is violated.
func (r *Result) violatedKinds() string {
	var names []string
	for _, k := range r.RowKinds {
		if k.Verdict == Violated {
			names = append(names, fmt.Sprintf("%q (p_holm %.3g, %d invalid outcomes)", k.Kind, k.PHolm, k.Invalid))
		}
	}
	return strings.Join(names, ", ")
}
