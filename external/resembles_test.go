package external

import (
	"context"
	"testing"
	"time"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// resemblesSource is resolve's resembles tests' source: V = 20, where
// every catalogued mutant is violated within 200,000 trials.
const resemblesSource = "dirichlet:V=20,a=0.5,beta=0.7"

// runFakeConform checks the fake implementation of rule behaviour on
// resemblesSource (γ = 3) with --conform conform.
func runFakeConform(t *testing.T, behaviour, conform string, trials int64) Report {
	t.Helper()
	src, err := source.New(resemblesSource, 3, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd, env := fakeCommand(behaviour)
	rep, err := Run(context.Background(), src, RunConfig{Config: Config{Command: cmd, Env: env, Mode: Verify, Timeout: time.Minute},
		Conform: conform, Check: check.Config{Gamma: 3, Trials: trials, Seed: 1, Batch: 500}})
	if err != nil {
		t.Fatalf("%s: %v", behaviour, err)
	}
	return rep
}

// TestExternalResemblesEveryBug: an external conformance check (--conform
// token, verify mode) ranks the harness's rules and the bug catalogue by
// the likelihood of the implementation's outcomes given the drafts it was
// sent, as an in-process check does. Every catalogued bug shown by its
// law or by the edge case, run as a fake Go implementation of its mutant
// on resolve's resembles source (V = 20) at the first of 20,000 and 200,000 trials where
// its check is violated, is named first under resembles with its thread
// and a positive gap, and the fits cover the steps scored.
func TestExternalResemblesEveryBug(t *testing.T) {
	t.Parallel()
	for _, b := range algos.Bugs() {
		if b.Evidence != algos.ByLaw && b.Evidence != algos.ByEdge {
			continue
		}
		t.Run(b.Mutant, func(t *testing.T) {
			t.Parallel()
			var rep Report
			for _, n := range []int64{20000, 200000} {
				if rep = runFakeConform(t, b.Mutant, "token", n); rep.Verdict == check.Violated {
					break
				}
			}
			if rep.Verdict != check.Violated || rep.Mode != "conform:token" {
				t.Fatalf("verdict %s, mode %s at %d trials: %s", rep.Verdict, rep.Mode, rep.Trials, rep.Claim)
			}
			if len(rep.Fits) == 0 || rep.Fits[0].Steps == 0 {
				t.Fatalf("no fits: %+v", rep.Fits)
			}
			if len(rep.Resembles) > 0 && rep.Resembles[0].LogLikGap != nil {
				t.Logf("%d trials (%d fit steps): %s, gap %.4g", rep.Trials, rep.Fits[0].Steps, rep.Resembles[0].Bug, *rep.Resembles[0].LogLikGap)
			}
			if len(rep.Resembles) == 0 || rep.Resembles[0].Bug != b.Name || rep.Resembles[0].Thread != b.Thread || rep.Resembles[0].LogLikGap == nil || !(*rep.Resembles[0].LogLikGap > 0) {
				t.Errorf("%d trials (%d fit steps): resembles %+v, want %q (%s) first with a positive gap", rep.Trials, rep.Fits[0].Steps, rep.Resembles, b.Name, b.Thread)
			}
		})
	}
}

// TestExternalConformBlock: with --conform block, a correct block
// verifier (20,000 trials) is not violated, so resembles is null, and no
// lossy rule or planted bug explains its outcomes better than chance (a
// chance of at most the level 0.01 at this seed, check.ChanceThreshold);
// the cumulative-product block verification with a token residual is
// violated and resembles names it first.
func TestExternalConformBlock(t *testing.T) {
	t.Parallel()
	rep := runFakeConform(t, "block", "block", 20000)
	ex, _, ok := check.Explaining(rep.Fits, rep.Level)
	if rep.Verdict != check.NotDetected || rep.Resembles != nil || !ok || len(ex) != 0 || !rep.Fits[0].Lossless {
		t.Errorf("block: verdict %s, resembles %+v, explained by %+v, fits %+v", rep.Verdict, rep.Resembles, ex, rep.Fits[:min(3, len(rep.Fits))])
	}
	for _, b := range algos.Bugs() {
		if b.Mutant != "mutant-block-tokenwise" {
			continue
		}
		rep := runFakeConform(t, b.Mutant, "block", 20000)
		if rep.Verdict != check.Violated || len(rep.Resembles) == 0 || rep.Resembles[0].Bug != b.Name {
			t.Errorf("%s: verdict %s, resembles %+v; want violated and %q first", b.Mutant, rep.Verdict, rep.Resembles, b.Name)
		}
	}
}
