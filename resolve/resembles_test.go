package resolve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// resemblesSource is the source of the resembles tests: V = 20, so that a
// step's laws cost little and every catalogued mutant is violated within
// 200,000 trials.
const resemblesSource = "dirichlet:V=20,a=0.5,beta=0.7"

// runCheck runs an in-process check of algo (conform: "" or a rule).
func runCheck(t *testing.T, algo, conform string, trials int64, seed uint64) resolve.Report {
	t.Helper()
	rep, err := resolve.Run(context.Background(), resolve.Request{Algo: algo, Source: resemblesSource, Conform: conform,
		Config: check.Config{Gamma: 3, Trials: trials, Seed: seed, Workers: 1}})
	if err != nil {
		t.Fatalf("%s: %v", algo, err)
	}
	return rep
}

// runRows runs an in-process check of the batch tree rule algo (k = 2,
// checked in batches with the rows-of-a-batch tests).
func runRows(t *testing.T, algo string, trials int64, seed uint64) resolve.Report {
	t.Helper()
	rep, err := resolve.Run(context.Background(), resolve.Request{Algo: algo, K: 2, Source: resemblesSource,
		Config: check.Config{Gamma: 3, Trials: trials, Seed: seed, Workers: 1}})
	if err != nil {
		t.Fatalf("%s: %v", algo, err)
	}
	return rep
}

// TestResemblesEveryBug: every catalogued mutant, checked at the first of
// 20,000 and 200,000 trials where it is violated, is named first under
// resembles with its thread (mutant-resample-p, mutant-bonus-row and
// mutant-q-mismatch among them). A bug shown by its law or the edge case
// is checked with --conform token and named with a positive gap to the
// next; a bug shown by the rows tests (a batch tree rule) is checked as
// itself, and named with the rejecting rows test and no gap.
func TestResemblesEveryBug(t *testing.T) {
	t.Parallel()
	for _, b := range algos.Bugs() {
		t.Run(b.Mutant, func(t *testing.T) {
			t.Parallel()
			var rep resolve.Report
			for _, n := range []int64{20000, 200000} {
				if b.Evidence == algos.ByRows {
					rep = runRows(t, b.Mutant, n, 1)
				} else {
					rep = runCheck(t, b.Mutant, "token", n, 1)
				}
				if rep.Verdict == check.Violated {
					break
				}
			}
			if rep.Verdict != check.Violated {
				t.Fatalf("not violated at %d trials: %s", rep.Trials, rep.Claim)
			}
			if len(rep.Resembles) == 0 || rep.Resembles[0].Bug != b.Name || rep.Resembles[0].Thread != b.Thread {
				t.Fatalf("%d trials: resembles %+v, want %q (%s) first", rep.Trials, rep.Resembles, b.Name, b.Thread)
			}
			first := rep.Resembles[0]
			if first.LogLikGap != nil {
				t.Logf("%d trials: %s, gap %.4g", rep.Trials, first.Bug, *first.LogLikGap)
			} else {
				t.Logf("%d trials: %s, shown by %s", rep.Trials, first.Bug, first.Test)
			}
			if b.Evidence == algos.ByRows {
				if first.LogLikGap != nil || !strings.HasPrefix(first.Test, "rows ") {
					t.Errorf("%d trials: %+v, want no gap and a rows-of-a-batch test", rep.Trials, first)
				}
			} else if first.LogLikGap == nil || !(*first.LogLikGap > 0) {
				t.Errorf("%d trials: %+v, want a positive gap", rep.Trials, first)
			}
		})
	}
}

// TestResemblesLosslessMode: the default (losslessness) check of the
// three mutants the issue names, and of the inclusive comparison, at
// 20,000 trials, names the matching bug first.
func TestResemblesLosslessMode(t *testing.T) {
	t.Parallel()
	want := map[string]string{"mutant-resample-p": "residual drawn from p", "mutant-bonus-row": "bonus from p_gamma",
		"mutant-q-mismatch": "temperature mismatch between draft and ratio", "mutant-zero-coin": "inclusive comparison"}
	for algo, bug := range want {
		rep := runCheck(t, algo, "", 20000, 1)
		if rep.Verdict != check.Violated || len(rep.Resembles) == 0 || rep.Resembles[0].Bug != bug {
			t.Errorf("%s: verdict %s, resembles %+v; want violated and %q first", algo, rep.Verdict, rep.Resembles, bug)
		}
	}
}

// TestInclusiveComparisonNotLossy: a token verifier whose only bug is the
// inclusive comparison (its law is token's; the edge case shows it)
// resembles the inclusive comparison, no lossy rule or planted bug
// explains its outcomes better than chance, and its best fit is a
// lossless rule (it was "most like cascade-chow", a lossy rule that ties
// token at its default setting where it always defers).
func TestInclusiveComparisonNotLossy(t *testing.T) {
	t.Parallel()
	rep := runCheck(t, "mutant-zero-coin", "", 20000, 2)
	if len(rep.Resembles) != 1 || rep.Resembles[0].Bug != "inclusive comparison" {
		t.Errorf("resembles %+v, want the inclusive comparison alone", rep.Resembles)
	}
	ex, nominal, ok := check.Explaining(rep.Fits, rep.Level)
	if len(ex) != 0 || !ok || !rep.Fits[0].Lossless || nominal.Name != rep.Fits[0].Name {
		t.Errorf("explained by %+v; best fit %+v, nominal %s", ex, rep.Fits[0], nominal.Name)
	}
}

// TestNoExplanationOfLosslessRules: checks of token and block
// verification (lossless) are not violated, so resembles is null, and no
// lossy rule or planted bug explains their outcomes better than chance.
// Under a lossless rule's law each check passes that chance threshold with
// probability at most its level 0.01 (check.ChanceThreshold), so the 8
// fixed-seed checks below would fail with probability at most 8%.
func TestNoExplanationOfLosslessRules(t *testing.T) {
	t.Parallel()
	for _, algo := range []string{"token", "block"} {
		for seed := uint64(1); seed <= 4; seed++ {
			rep := runCheck(t, algo, "", 20000, seed)
			ex, _, _ := check.Explaining(rep.Fits, rep.Level)
			if rep.Verdict == check.Violated || rep.Resembles != nil || len(ex) != 0 {
				t.Errorf("%s seed %d: verdict %s, resembles %+v, explained by %+v", algo, seed, rep.Verdict, rep.Resembles, ex)
			}
		}
	}
}
