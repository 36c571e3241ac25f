package check

import (
	"math"
	"strings"
	"testing"
)

// TestSortFitsLosslessFirst: equal mean log-likelihoods (a lossy rule at a
// setting where its law is token verification's) rank the lossless rule
// first whatever the names; a better mean ranks first whatever the kind.
func TestSortFitsLosslessFirst(t *testing.T) {
	fits := []Fit{{Name: "cascade-chow", MeanLogLik: -2.5}, {Name: "token", Lossless: true, MeanLogLik: -2.5 + 1e-12},
		{Name: "mutant-bonus-row", MeanLogLik: -2.4}}
	sortFits(fits)
	if fits[0].Name != "mutant-bonus-row" || fits[1].Name != "token" || fits[2].Name != "cascade-chow" {
		t.Errorf("order %v %v %v, want mutant-bonus-row, token, cascade-chow", fits[0].Name, fits[1].Name, fits[2].Name)
	}
}

// TestChanceThreshold: a rule explains the outcomes when its total
// log-likelihood beats the best lossless rule's by more than ln(k/level):
// ln(2/0.01) = ln 200 for two rules that are not lossless. A gap just
// below it explains nothing; just above, the rule explains, and
// resembles names its bug with the gap to the nominal rule.
func TestChanceThreshold(t *testing.T) {
	c := ChanceThreshold(2, 0.01)
	if math.Abs(c-math.Log(200)) > 1e-15 {
		t.Fatalf("threshold %v, want ln 200", c)
	}
	fits := func(gap float64) []Fit {
		return []Fit{{Name: "token", Lossless: true, MeanLogLik: -2, Steps: 1000},
			{Name: "mutant-a", MeanLogLik: -2 + gap/1000, Steps: 1000}, {Name: "lenience", MeanLogLik: -3, Steps: 1000}}
	}
	for _, tc := range []struct {
		gap  float64
		want int
	}{{c - 1e-6, 0}, {c + 1e-6, 1}} {
		ex, nominal, ok := Explaining(fits(tc.gap), 0.01)
		if len(ex) != tc.want || !ok || nominal.Name != "token" {
			t.Errorf("gap %v: explained by %+v (nominal %s), want %d", tc.gap, ex, nominal.Name, tc.want)
		}
	}
	bugs := []Suspect{{Bug: "a", Thread: "x", Candidate: "mutant-a"}, {Bug: "b", Candidate: "lenience"}, {Bug: "edge", Edge: true}, {Bug: "rows", Rows: true}}
	res := Result{Verdict: Violated, Fits: fits(c + 1)}
	// four suspects: two by law, so the threshold is ln(2/0.01) again
	if got := resembles(&res, bugs, 0.01); len(got) != 1 || got[0].Bug != "a" || got[0].LogLikGap == nil || math.Abs(*got[0].LogLikGap-(c+1)) > 1e-9 {
		t.Errorf("resembles %+v, want a with gap %v", got, c+1)
	}
	res.Fits = fits(c - 1)
	if got := resembles(&res, bugs, 0.01); got == nil || len(got) != 0 {
		t.Errorf("below the threshold: resembles %+v, want empty (no known bug fits)", got)
	}
	res.Edge, res.EdgeMsg = Violated, "edge: ... whose target probability is 0 "+InclusiveMark
	if got := resembles(&res, bugs, 0.01); len(got) != 1 || got[0].Bug != "edge" || got[0].LogLikGap == nil || *got[0].LogLikGap != -fitFloor {
		t.Errorf("failed inclusive edge case: resembles %+v, want edge with gap %v", got, -fitFloor)
	}
	res.Verdict = NotDetected
	if got := resembles(&res, bugs, 0.01); got != nil {
		t.Errorf("not violated: resembles %+v, want nil", got)
	}
}

// TestResemblesRows: a bug shown by the rows-of-a-batch tests is listed,
// first and with the rejecting test and no log-likelihood gap, only when
// such a test rejected; without fits it is still listed (a tree check),
// and with neither fits nor a rejecting rows test the suspects are not
// ranked (nil).
func TestResemblesRows(t *testing.T) {
	bugs := []Suspect{{Bug: "a", Candidate: "mutant-a"}, {Bug: "rows", Thread: "x", Rows: true}}
	fits := []Fit{{Name: "token", Lossless: true, MeanLogLik: -2, Steps: 1000}, {Name: "mutant-a", MeanLogLik: -1, Steps: 1000}}
	res := Result{Verdict: Violated, Fits: fits, dependent: []string{"rows of a batch (independence, first tokens): Holm-adjusted p = 0"}}
	got := resembles(&res, bugs, 0.01)
	if len(got) != 2 || got[0].Bug != "rows" || got[0].LogLikGap != nil || got[0].Test != res.dependent[0] || got[1].Bug != "a" || got[1].LogLikGap == nil {
		t.Errorf("dependent rows with a law fit: resembles %+v, want rows (no gap, its test) then a", got)
	}
	res.Fits = nil
	if got := resembles(&res, bugs, 0.01); len(got) != 1 || got[0].Bug != "rows" {
		t.Errorf("dependent rows, no fits: resembles %+v, want rows alone", got)
	}
	res.dependent = nil
	if got := resembles(&res, bugs, 0.01); got != nil {
		t.Errorf("independent rows, no fits: resembles %+v, want nil (not ranked)", got)
	}
	res.Fits = fits[:1]
	if got := resembles(&res, bugs, 0.01); got == nil || len(got) != 0 {
		t.Errorf("independent rows, no law fit: resembles %+v, want empty", got)
	}
}

// TestSetEdgeRanksAgain: an edge case set after the tests (an external
// implementation's) that violates a result with its inclusive-comparison
// message ranks the suspects again, so the inclusive comparison is named.
func TestSetEdgeRanksAgain(t *testing.T) {
	res := Result{Verdict: NotDetected, Level: 0.01, suspects: []Suspect{{Bug: "inclusive", Edge: true}},
		Fits: []Fit{{Name: "token", Lossless: true, MeanLogLik: -2, Steps: 100}}}
	res.rerank()
	if res.Resembles != nil {
		t.Fatalf("not violated: resembles %+v", res.Resembles)
	}
	msg := "edge: ... whose target probability is 0 " + InclusiveMark
	res.SetEdge(Violated, msg)
	if len(res.Resembles) != 1 || res.Resembles[0].Bug != "inclusive" {
		t.Errorf("after SetEdge: resembles %+v, want the inclusive comparison", res.Resembles)
	}
	// a conformance check: the failed case made it violated, and the claim says so
	res = Result{Verdict: NotDetected, Mode: "conform:token", Level: 0.01}
	res.SetEdge(Violated, msg)
	if res.Verdict != Violated || !strings.Contains(res.Claim, "a scripted edge case failed: "+msg) {
		t.Errorf("conformance check: verdict %s, claim %q; want violated, naming the edge case", res.Verdict, res.Claim)
	}
}
