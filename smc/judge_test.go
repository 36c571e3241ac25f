package smc

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/stattest"
)

// judgeStats is a hand-made sample of R = 10,000 runs: Ẑ/Z with mean m
// and sd 0.5 (standard error 0.005), and two posterior groups, the second
// of mean P(b) + d with standard error 0.004.
func judgeStats(m, d float64) Stats {
	st := Stats{Runs: 10000, SizeMean: 4, SizeMin: 4, SizeMax: 4}
	st.ZRatio = stattest.Summary{N: 10000, Mean: m, StdDev: 0.5}
	st.Groups = []Group{
		{Label: "a", P: 0.6, Est: stattest.Summary{N: 10000, Mean: 0.6, StdDev: 0.3}},
		{Label: "b", P: 0.4, Est: stattest.Summary{N: 10000, Mean: 0.4 + d, StdDev: 0.4}},
	}
	return st
}

// Judge assembles its two tests through check.Assemble: the p-values are
// the normal tail probabilities of the statistics (Bonferroni over the
// groups within the posterior test), Holm's correction across the two
// tests, the minimum detectable relative bias of Ẑ at the Holm share
// level/2, and check's words in the claim.
func TestJudgeAssembly(t *testing.T) {
	t.Parallel()
	const level, power = 0.01, 0.9
	nrm := distuv.UnitNormal
	// E[Ẑ]/Z = 1.015: z = 0.015/0.005 = 3; group b off by 0.0104:
	// z = 0.0104/0.004 = 2.6. p(z) = 2Φ̄(3) = 0.0027 < level/2 rejects
	// under Bonferroni and Holm; the posterior's 2·2Φ̄(2.6) = 0.0187 is
	// above the level, so neither rejects it.
	j := Judge(judgeStats(1.015, 0.0104), nil, 8, level, power)
	pz := 2 * nrm.Survival(3)
	pPost := 2 * 2 * nrm.Survival(0.0104/0.004)
	if math.Abs(j.Z.Statistic-3) > 1e-9 || math.Abs(j.Z.PValue-pz) > 1e-12 || math.Abs(j.Z.PHolm-2*pz) > 1e-12 {
		t.Errorf("z test: z %g p %g Holm %g, want 3, %g, %g", j.Z.Statistic, j.Z.PValue, j.Z.PHolm, pz, 2*pz)
	}
	if math.Abs(j.Posterior.PValue-pPost) > 1e-12 || math.Abs(j.Posterior.PHolm-pPost) > 1e-12 || j.Posterior.Worst != "b" {
		t.Errorf("posterior test: p %g Holm %g worst %s, want %g twice, b", j.Posterior.PValue, j.Posterior.PHolm, j.Posterior.Worst, pPost)
	}
	mdb := (nrm.Quantile(1-level/4) + nrm.Quantile(power)) * 0.005
	if j.Z.Level != level/2 || math.Abs(j.Z.MinDetectableRelBias-mdb) > 1e-15 {
		t.Errorf("z test at level %g detects %g, want %g and %g", j.Z.Level, j.Z.MinDetectableRelBias, level/2, mdb)
	}
	if !j.Z.Reject || j.Posterior.Reject || j.Verdict != Violated {
		t.Errorf("rejects z %v, posterior %v, verdict %s; want true, false, violated", j.Z.Reject, j.Posterior.Reject, j.Verdict)
	}
	zt := check.Test{Name: ZTestName, PHolm: j.Z.PHolm, Quantity: ZQuantity}
	if want := "violated: " + check.RejectWords(ZTestName, zt, level); !strings.HasPrefix(j.Claim, want) {
		t.Errorf("claim %q, want it to begin %q", j.Claim, want)
	}

	// Holm, not Bonferroni: group b off by 0.0116 (z = 2.9, p = 2·2Φ̄(2.9)
	// = 0.0075) is above level/2 but below the level, and the Ẑ test's
	// smaller p rejects first, so Holm rejects the posterior test too.
	j = Judge(judgeStats(1.015, 0.0116), nil, 8, level, power)
	pPost = 2 * 2 * nrm.Survival(0.0116/0.004)
	if !(pPost > level/2 && pPost < level) {
		t.Fatalf("the example's p = %g is not between level/2 and level", pPost)
	}
	if math.Abs(j.Posterior.PHolm-pPost) > 1e-12 || !j.Posterior.Reject {
		t.Errorf("posterior test: Holm p %g reject %v, want %g, true", j.Posterior.PHolm, j.Posterior.Reject, pPost)
	}

	// Unbiased at these sizes: not detected, and the claim states the
	// finest test's detectable deviation in its own quantity.
	j = Judge(judgeStats(1.001, 0.001), nil, 8, level, power)
	if j.Verdict != NotDetected || j.Z.Reject || j.Posterior.Reject {
		t.Fatalf("verdict %s (z %v, posterior %v), want not_detected", j.Verdict, j.Z.Reject, j.Posterior.Reject)
	}
	// the finest: the posterior test, whose largest standard error 0.004
	// with Bonferroni over 2 groups gives (z_{1−level/8} + z_power)·0.004
	// = 0.0172, below the Ẑ test's (z_{1−level/4} + z_power)·0.005 = 0.0204
	mdPost := (nrm.Quantile(1-level/8) + nrm.Quantile(power)) * 0.004
	if !(mdPost < mdb) || math.Abs(mdPost-0.0172) > 1e-4 || math.Abs(mdb-0.0204) > 1e-4 {
		t.Fatalf("detectable deviations %g and %g, want 0.0172 < 0.0204", mdPost, mdb)
	}
	finest := check.Test{Name: PosteriorTestName, MinDetTV: mdPost, Quantity: PosteriorQuantity}
	want := check.BoundWords("an unbiased sampler (E[Ẑ] = Z, E[γ̂_g] = Z·P(g))", "over 10000 runs", 2, level, power, level/2, finest)
	if !strings.HasPrefix(j.Claim, want) {
		t.Errorf("claim %q, want it to begin %q", j.Claim, want)
	}
}
