package check

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Suspect is a catalogued bug a violated check can name (Config.Bugs),
// by one of three kinds of evidence: the law of one of Config.Candidates
// plants it (Candidate); with Edge, the scripted-coin case that accepts a
// draft token of target probability 0 shows it (a bug on coins of
// probability zero, whose law is the nominal rule's); with Rows, a
// rows-of-a-batch independence test rejects (a bug whose every row's law
// is the rule's, so no likelihood of a row's outcomes can tell it).
type Suspect struct {
	Bug, Thread string
	Candidate   string
	Edge, Rows  bool
}

// Resemblance is a catalogued bug the outcomes of a violated check fit
// (Result.Resembles). LogLikGap is its log-likelihood above the next
// listed bug's, or above the nominal rule's for the last one listed; nil
// for a bug shown by the rows-of-a-batch tests, where no gap is claimed,
// and Test then names the test that shows it.
type Resemblance struct {
	Bug       string   `json:"bug"`
	Thread    string   `json:"thread"`
	LogLikGap *float64 `json:"loglik_gap"`
	Test      string   `json:"test,omitempty"`
}

// InclusiveMark ends an edge case's message when a sampler accepted a
// draft token of target probability 0 at a coin of exactly 0 (the
// in-process edge cases' and an external implementation's).
const InclusiveMark = "(inclusive comparison r <= p/q)"

// fitTie is the difference of mean log-likelihoods below which two fits
// are ranked as equal, and then the lossless rule first: two laws that
// coincide on a source (a lossy rule at a setting where it is token
// verification) give the same mean up to rounding.
const fitTie = 1e-9

// sortFits ranks fits best first: by mean log-likelihood, lossless rules
// first among equal ones, then by name.
func sortFits(fits []Fit) {
	slices.SortStableFunc(fits, func(a, b Fit) int {
		if math.Abs(a.MeanLogLik-b.MeanLogLik) > fitTie {
			return cmp.Compare(b.MeanLogLik, a.MeanLogLik)
		}
		if a.Lossless != b.Lossless {
			if a.Lossless {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// ChanceThreshold is the log-likelihood ratio, over the fits' steps, by
// which a named rule must beat the nominal rule (the lossless rule whose
// law explains the outcomes best) to be said to explain them: ln(k/level)
// for k rules competing. If the outcomes follow a lossless rule's law, the
// likelihood ratio of any other law to it has mean at most 1, so by
// Markov's inequality each of the k rules passes with probability at
// most level/k and some rule with probability at most level.
func ChanceThreshold(k int, level float64) float64 {
	if level <= 0 || level >= 1 {
		level = DefaultLevel
	}
	return math.Log(float64(max(k, 1)) / level)
}

// Explanation is a fit that explains the outcomes better than chance
// (Explaining), with its log-likelihood above the nominal rule's.
type Explanation struct {
	Fit
	Gap float64
}

// Explaining returns the fits of rules that are not lossless and explain
// the outcomes better than chance, best first: their total
// log-likelihood (mean × steps) beats the nominal rule's (the best
// lossless fit's) by more than ChanceThreshold, k being the number of fits
// that are not lossless. It also returns the nominal fit (ok false when
// there is no lossless fit, and then nothing explains).
func Explaining(fits []Fit, level float64) (out []Explanation, nominal Fit, ok bool) {
	best, k := math.Inf(-1), 0
	for _, f := range fits {
		if !f.Lossless {
			k++
		} else if t := f.MeanLogLik * float64(f.Steps); t > best {
			best, nominal, ok = t, f, true
		}
	}
	if !ok {
		return nil, Fit{}, false
	}
	c := ChanceThreshold(k, level)
	for _, f := range fits {
		if g := f.MeanLogLik*float64(f.Steps) - best; !f.Lossless && g > c {
			out = append(out, Explanation{f, g})
		}
	}
	return out, nominal, true
}

// rerank ranks the result's suspects again (Result.Resembles): after
// the tests, and whenever an edge case or a component changes the verdict.
func (r *Result) rerank() { r.Resembles = resembles(r, r.suspects, r.Level) }

// resembles ranks the suspects bugs for a violated result. First, when a
// rows-of-a-batch independence test rejected, the bugs shown by it (Rows),
// with that test and no log-likelihood gap: every other test, and the
// fits, assume independent rows. Then the bugs whose evidence beats the
// nominal rule by more than ChanceThreshold (over the law suspects), best
// first. A law suspect scores its candidate's total log-likelihood less
// the nominal rule's; an edge suspect whose case failed scores
// -log(1e-300), the fits' count of an outcome the nominal rule makes
// impossible (the case's outcome has probability 1 under the bug given
// its coin). Nil when the check was not violated, has no suspects, or
// (without fits, no failed edge case and no rejecting rows test) could not
// score them; empty when no known bug fits.
func resembles(res *Result, bugs []Suspect, level float64) []Resemblance {
	if res.Verdict != Violated || len(bugs) == 0 {
		return nil
	}
	out := []Resemblance{}
	for _, s := range bugs {
		if s.Rows && len(res.dependent) > 0 {
			out = append(out, Resemblance{Bug: s.Bug, Thread: s.Thread, Test: res.dependent[0]})
		}
	}
	fit := scoreSuspects(res, bugs, level)
	if len(res.Fits) == 0 && len(fit) == 0 && len(out) == 0 {
		return nil // no fits: the law suspects were not scored
	}
	for i, f := range fit {
		gap := f.score
		if i+1 < len(fit) {
			gap -= fit[i+1].score
		}
		out = append(out, Resemblance{Bug: f.s.Bug, Thread: f.s.Thread, LogLikGap: &gap})
	}
	return out
}

// scored is a suspect and its log-likelihood above the nominal rule's.
type scored struct {
	s     Suspect
	score float64
}

// scoreSuspects returns the law and edge suspects that fit res better
// than chance (resembles), best first.
func scoreSuspects(res *Result, bugs []Suspect, level float64) []scored {
	total := map[string]float64{}
	nominal, laws := math.Inf(-1), 0
	for _, f := range res.Fits {
		total[f.Name] = f.MeanLogLik * float64(f.Steps)
		if f.Lossless {
			nominal = max(nominal, total[f.Name])
		}
	}
	for _, s := range bugs {
		if !s.Edge && !s.Rows {
			laws++
		}
	}
	c := ChanceThreshold(laws, level)
	var fit []scored
	for _, s := range bugs {
		t, ok := total[s.Candidate]
		switch {
		case s.Edge && res.Edge == Violated && strings.Contains(res.EdgeMsg, InclusiveMark):
			fit = append(fit, scored{s, -fitFloor})
		case !s.Edge && !s.Rows && ok && !math.IsInf(nominal, -1) && t-nominal > c:
			fit = append(fit, scored{s, t - nominal})
		}
	}
	slices.SortStableFunc(fit, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	return fit
}
