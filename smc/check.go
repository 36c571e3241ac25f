package smc

import (
	"context"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// Verdicts.
const (
	// NotDetected: no test rejected. It does not say the sampler is
	// unbiased, only that no deviation the tests could see at their level
	// and power was seen (the words are sim/check's).
	NotDetected = "not_detected"
	Violated    = "violated"
	// Inconclusive: the runs carry no information on E[Ẑ] (every run
	// ended with Ẑ = 0), so neither verdict is supported.
	Inconclusive = "inconclusive"
)

// Defaults of the check.
const (
	DefaultLevel = 0.01
	DefaultPower = 0.9
	// ConvergenceFactor is the ratio of the larger particle count of the
	// convergence test to N.
	ConvergenceFactor = 4
)

// ZTest is the test of H0: E[Ẑ] = Z.
type ZTest struct {
	// Statistic is (mean(Ẑ/Z) − 1)/(sd(Ẑ/Z)/√R), asymptotically standard
	// normal under H0 (central limit theorem over independent runs).
	Statistic float64 `json:"statistic"`
	PValue    float64 `json:"p_value"`
	// PHolm is PValue adjusted by Holm's correction over the family of
	// this test and the posterior test (check.Assemble); the test
	// rejects when PHolm < the family level.
	PHolm float64 `json:"p_holm"`
	// Level is the test's Holm share of the family level (half of it),
	// at which MinDetectableRelBias is stated.
	Level float64 `json:"level"`
	// MinDetectableRelBias is the smallest |E[Ẑ]/Z − 1| detected with
	// probability Power: (z_{1−Level/2} + z_Power)·sd(Ẑ/Z)/√R.
	MinDetectableRelBias float64 `json:"min_detectable_rel_bias"`
	Power                float64 `json:"power"`
	Reject               bool    `json:"reject"`
}

// PosteriorTest is the test of H0: E[γ̂_g] = Z·P(g) for every posterior
// group g, where γ̂_g = (1/N)·Σ_{i: x_i ∈ g} w_i is the unnormalised
// particle measure (unbiased for a correct sampler, Del Moral 2004,
// Feynman–Kac Formulae, Thm 7.4.2): the largest |z| over the groups with a
// Bonferroni correction (PValue), then Holm's correction with the Ẑ test
// (PHolm; Level is its Holm share, half the family level).
type PosteriorTest struct {
	Groups  int     `json:"groups"`
	MaxAbsZ float64 `json:"max_abs_z"`
	Worst   string  `json:"worst_group"`
	PValue  float64 `json:"p_value"`
	PHolm   float64 `json:"p_holm"`
	Level   float64 `json:"level"`
	Reject  bool    `json:"reject"`
}

// Convergence compares the mean posterior TV at N and at
// ConvergenceFactor·N particles: converging when the one-sided z test
// of E[TV(N)] > E[TV(4N)] rejects at Level.
type Convergence struct {
	NLarge     int     `json:"n_large"`
	RunsLarge  int64   `json:"runs_large"`
	TVSmall    float64 `json:"tv_small"`
	TVLarge    float64 `json:"tv_large"`
	Ratio      float64 `json:"ratio"`
	Statistic  float64 `json:"statistic"`
	Level      float64 `json:"level"`
	Converging bool    `json:"converging"`
}

// Judgement is the verdict on one scheme.
type Judgement struct {
	Z         ZTest         `json:"z_test"`
	Posterior PosteriorTest `json:"posterior_test"`
	Converge  *Convergence  `json:"convergence,omitempty"`
	Verdict   string        `json:"verdict"`
	// Claim says in one sentence what was shown, in check's words: the
	// test that rejected, or the deviation the finest test would have
	// detected; never that the scheme is unbiased.
	Claim   string   `json:"claim"`
	Reasons []string `json:"reasons,omitempty"`
}

// The two tests of a scheme's unbiasedness, one family (check.Assemble):
// their names and the quantities their minimum detectable deviations are
// stated in.
const (
	ZTestName         = "z-hat"
	ZQuantity         = "relative bias of Ẑ, |E[Ẑ]/Z − 1|"
	PosteriorTestName = "posterior-groups"
	PosteriorQuantity = "bias of a posterior group's particle measure over Z, |E[γ̂_g]/Z − P(g)|, in any group"
)

// Judge tests the runs st (and, when large is non-nil, the runs at
// ConvergenceFactor·N particles, for convergence) at family-wise level:
// the Ẑ test and the posterior test are one family assembled by
// check.Assemble (each at its Holm share level/2, with its minimum
// detectable deviation there, then Holm's correction), the convergence
// test is at level. The verdict is Violated when either null test
// rejects or convergence is not shown, and Inconclusive when every run
// ended with Ẑ = 0 while particles survived (a zero-variance sample
// supports no verdict). Samples that carry no information are not
// evidence: a group never observed is not tested, nor is convergence when
// a mean TV is NaN.
func Judge(st Stats, large *Stats, N int, level, power float64) Judgement {
	var j Judgement
	if st.Runs > 0 && st.ZeroRuns == st.Runs && st.SizeMax > 0 {
		// Every run ended with Ẑ = 0 although particles survived: their
		// weights were all zero, which a correct scheme gives with high
		// probability when Z is small. Ẑ/Z = 0 with no spread: the z
		// statistic would be −∞ and call it violated.
		j.Z = ZTest{Level: level / 2, Power: power, PValue: math.NaN(), PHolm: math.NaN(), MinDetectableRelBias: math.Inf(1)}
		j.Posterior = PosteriorTest{Groups: len(st.Groups), Level: level / 2, PValue: math.NaN(), PHolm: math.NaN()}
		j.Verdict = Inconclusive
		j.Reasons = []string{fmt.Sprintf("all %d runs ended with Ẑ = 0 (every surviving particle had weight 0): they carry no information on E[Ẑ]; use more particles or runs", st.Runs)}
		j.Claim = "inconclusive: " + j.Reasons[0]
		return j
	}
	zp, pp := zPending(st, &j.Z), posteriorPending(st, &j.Posterior)
	fam, err := check.Assemble([]check.Pending{zp, pp}, level, power)
	if err != nil { // normal tests always evaluate
		j.Verdict, j.Reasons = Inconclusive, []string{"the tests could not run: " + err.Error()}
		j.Claim = "inconclusive: " + j.Reasons[0]
		return j
	}
	zt, pt := fam.Tests[0], fam.Tests[1]
	j.Z.PValue, j.Z.PHolm, j.Z.Level, j.Z.MinDetectableRelBias, j.Z.Power = zt.PValue, zt.PHolm, zt.LevelShare, zt.MinDetTV, power
	j.Z.Reject = zt.PHolm < level
	j.Posterior.PValue, j.Posterior.PHolm, j.Posterior.Level = pt.PValue, pt.PHolm, pt.LevelShare
	j.Posterior.Reject = pt.PHolm < level
	if j.Z.Reject {
		j.Reasons = append(j.Reasons, check.RejectWords(zt.Name, zt, level)+fmt.Sprintf(": E[Ẑ]/Z = %.5f differs from 1 (z = %.2f)", st.ZRatio.Mean, j.Z.Statistic))
	}
	if j.Posterior.Reject {
		j.Reasons = append(j.Reasons, check.RejectWords(pt.Name, pt, level)+fmt.Sprintf(": the particle measure of group %s is biased (|z| = %.2f, Bonferroni over %d groups)", j.Posterior.Worst, j.Posterior.MaxAbsZ, j.Posterior.Groups))
	}
	if large != nil {
		cv, why := convergence(st, *large, N, level)
		if why != "" {
			j.Reasons = append(j.Reasons, why)
		}
		j.Converge = &cv
	}
	j.Verdict = NotDetected
	j.Claim = fam.Bound("an unbiased sampler (E[Ẑ] = Z, E[γ̂_g] = Z·P(g))", fmt.Sprintf("over %d runs", st.Runs)) + "; each test names its own quantity and detectable deviation"
	if len(j.Reasons) > 0 {
		j.Verdict = Violated
		j.Claim = "violated: " + strings.Join(j.Reasons, "; ")
	}
	return j
}

// zPending fills zt's statistic and returns the pending test of
// E[Ẑ]/Z = 1 over st's runs.
func zPending(st Stats, zt *ZTest) check.Pending {
	se := st.ZRatio.StdDev / math.Sqrt(float64(st.Runs))
	switch {
	case se > 0:
		zt.Statistic = (st.ZRatio.Mean - 1) / se
	case math.Abs(st.ZRatio.Mean-1) <= 1e-9:
		// the same Ẑ = Z in every run: no deviation, p = 1
	default:
		zt.Statistic = math.Inf(int(math.Copysign(1, st.ZRatio.Mean-1)))
	}
	return check.NormalTest(ZTestName, ZQuantity, zt.Statistic, se, 1, st.Runs)
}

// posteriorPending fills pt's groups, largest |z| and worst group and
// returns the pending test of E[γ̂_g]/Z = P(g) in every group: the
// largest |z|, Bonferroni over the groups, its minimum detectable bias
// set by the largest standard error.
func posteriorPending(st Stats, pt *PosteriorTest) check.Pending {
	R := float64(st.Runs)
	pt.Groups = len(st.Groups)
	maxSE := 0.0
	for _, g := range st.Groups {
		gse := g.Est.StdDev / math.Sqrt(R)
		maxSE = math.Max(maxSE, gse)
		var z float64
		switch {
		case gse > 0:
			z = math.Abs(g.Est.Mean-g.P) / gse
		case g.Est.Mean == 0:
			// never observed in R runs: a rare group, untested (its z
			// would be +∞ for a correct scheme with R·P(g) small)
		case math.Abs(g.Est.Mean-g.P) > 1e-9:
			z = math.Inf(1) // the same non-zero value in every run
		}
		if z > pt.MaxAbsZ || pt.Worst == "" {
			pt.MaxAbsZ, pt.Worst = z, g.Label
		}
	}
	return check.NormalTest(PosteriorTestName, PosteriorQuantity, pt.MaxAbsZ, maxSE, pt.Groups, st.Runs)
}

// convergence compares the mean posterior TV at N (st) and at
// ConvergenceFactor·N particles (large) by a one-sided z test at level;
// why says that convergence is not shown ("" when it is, or when a mean
// TV is NaN: no run at that N kept a weighted particle, which supports no
// comparison).
func convergence(st, large Stats, N int, level float64) (Convergence, string) {
	cv := Convergence{NLarge: ConvergenceFactor * N, RunsLarge: large.Runs, TVSmall: st.TV.Mean, TVLarge: large.TV.Mean, Level: level}
	if st.TV.Mean > 0 {
		cv.Ratio = large.TV.Mean / st.TV.Mean
	}
	s1 := st.TV.StdDev / math.Sqrt(float64(st.TV.N))
	s2 := large.TV.StdDev / math.Sqrt(float64(large.TV.N))
	if d := math.Hypot(s1, s2); d > 0 {
		cv.Statistic = (st.TV.Mean - large.TV.Mean) / d
	}
	cv.Converging = cv.Statistic > distuv.UnitNormal.Quantile(1-level)
	if !cv.Converging && !math.IsNaN(cv.TVSmall) && !math.IsNaN(cv.TVLarge) {
		return cv, fmt.Sprintf("posterior TV does not shrink from N = %d to %d (%.4g → %.4g, z = %.2f)", N, cv.NLarge, cv.TVSmall, cv.TVLarge, cv.Statistic)
	}
	return cv, ""
}

// ModelSpec describes a Feynman–Kac model over a model pair.
type ModelSpec struct {
	// Name labels the model in tables (optional).
	Name string
	// Source is a model-pair spec for source.New (markov:..., or any
	// other kind that yields a sim.Pair).
	Source string
	// MemBudget is the most bytes the source may take (0:
	// sim.DefaultMemBudget).
	MemBudget int64
	// LM picks the pair's model that is M: "p" (target, default) or "q".
	LM          string
	Prompt      []int
	EOS, T      int
	Temperature float64
	// Potentials are ParsePotential specs.
	Potentials []string
}

// StandardModels are the three models the tests, the check's defaults
// and the smc-steering experiment share: hard constraints with a soft
// expert (product of experts), keyword and length targets under a
// tempered second-order kernel, and a soft score only (the draft model
// as M, the target squared as expert).
func StandardModels() []ModelSpec {
	return []ModelSpec{
		{Name: "forbid+end+expert", Source: "markov:V=4,order=1,a=0.5,quality=0.5,seed=3", LM: "p", EOS: 0, T: 5, Potentials: []string{"forbid:1", "end", "expert:q"}},
		{Name: "keyword+length+tempered", Source: "markov:V=3,order=2,a=0.3,quality=0.3,seed=5", LM: "p", EOS: 0, T: 6, Temperature: 1.5, Potentials: []string{"keyword:2", "length:2-4"}},
		{Name: "expert^2", Source: "markov:V=5,order=1,a=1,quality=0.2,seed=7", LM: "q", EOS: 4, T: 4, Potentials: []string{"expert:p:2"}},
	}
}

// CheckConfig configures Check.
type CheckConfig struct {
	ModelSpec
	Scheme string
	Config
	Runs  int64
	Seed  uint64
	Level float64
	Power float64
	// NoConvergence skips the runs at ConvergenceFactor·N.
	NoConvergence bool
	Workers       int
	Progress      func(done, total int64)
}

// Report is the outcome of Check, with stable JSON field names.
type Report struct {
	Scheme           string     `json:"scheme"`
	Mutant           bool       `json:"mutant"`
	Summary          string     `json:"summary"`
	Model            string     `json:"model"`
	N                int        `json:"n"`
	K                int        `json:"k"`
	BisectTol        float64    `json:"bisect_tol,omitempty"`
	Runs             int64      `json:"runs"`
	Seed             uint64     `json:"seed"`
	Strings          int        `json:"posterior_support"`
	ZExact           float64    `json:"z_exact"`
	ZHatMean         float64    `json:"z_hat_mean"`
	ZHatCI95         [2]float64 `json:"z_hat_ci95"`
	ZRatio           float64    `json:"z_ratio"`
	ZRatioCI95       [2]float64 `json:"z_ratio_ci95"`
	RelativeVariance float64    `json:"relative_variance"`
	PosteriorTV      float64    `json:"posterior_tv"`
	PosteriorTVCI95  [2]float64 `json:"posterior_tv_ci95"`
	MeanESS          float64    `json:"mean_ess"`
	ZeroRuns         int64      `json:"zero_runs"`
	ParticlesMean    float64    `json:"particle_count_mean"`
	ParticlesMin     int        `json:"particle_count_min"`
	ParticlesMax     int        `json:"particle_count_max"`
	Judgement
}

// Build builds the model; seed is used where the source spec has no
// seed= of its own.
func (cfg ModelSpec) Build(seed uint64) (*Model, error) {
	src, err := source.New(cfg.Source, 1, seed, cfg.MemBudget)
	if err != nil {
		return nil, err
	}
	pair, ok := sim.PairOf(src.BlockSource)
	if !ok {
		return nil, fmt.Errorf("%w: source %s is a pool of rows, not a model; use a model pair such as markov:V=4", ErrBadModel, src.Spec)
	}
	m := &Model{Name: src.Spec, Prompt: cfg.Prompt, EOS: cfg.EOS, T: cfg.T, Temperature: cfg.Temperature}
	switch cfg.LM {
	case "", "p":
		m.LM = pair.P
	case "q":
		m.LM, m.Name = pair.Q, src.Spec+"/q"
	default:
		return nil, fmt.Errorf("%w: lm = %q; use p (the pair's target) or q (its draft)", ErrBadModel, cfg.LM)
	}
	for _, s := range cfg.Potentials {
		p, err := ParsePotential(s, pair)
		if err != nil {
			return nil, err
		}
		m.Potentials = append(m.Potentials, p)
	}
	return m, m.Validate()
}

// Check builds the model, enumerates its exact answers, runs the scheme
// cfg.Runs times with N particles (and, unless NoConvergence,
// max(1, Runs/ConvergenceFactor) times with ConvergenceFactor·N) and
// judges it (Judge). Errors are about the configuration; on cancellation
// it returns the report of the finished runs with ctx.Err().
func Check(ctx context.Context, cfg CheckConfig) (Report, error) {
	s, err := LookupScheme(cfg.Scheme)
	if err != nil {
		return Report{}, err
	}
	if cfg.Level == 0 {
		cfg.Level = DefaultLevel
	}
	if cfg.Power == 0 {
		cfg.Power = DefaultPower
	}
	switch {
	case !(cfg.Level > 0 && cfg.Level < 1):
		return Report{}, fmt.Errorf("level = %g; use 0 < level < 1", cfg.Level)
	case !(cfg.Power > 0 && cfg.Power < 1):
		return Report{}, fmt.Errorf("power = %g; use 0 < power < 1", cfg.Power)
	case cfg.Runs < 2 || cfg.Runs > sim.MaxTrials:
		return Report{}, fmt.Errorf("runs = %d; use 2 to %d (1e12)", cfg.Runs, int64(sim.MaxTrials))
	}
	if err := cfg.Config.Validate(s); err != nil {
		return Report{}, err
	}
	m, err := cfg.ModelSpec.Build(cfg.Seed)
	if err != nil {
		return Report{}, err
	}
	ex, err := Enumerate(m)
	if err != nil {
		return Report{}, err
	}
	runsLarge := max(1, cfg.Runs/ConvergenceFactor)
	if cfg.NoConvergence {
		runsLarge = 0
	}
	total := cfg.Runs + runsLarge
	opt := sim.MCOptions{Workers: cfg.Workers}
	if cfg.Progress != nil {
		opt.Progress = func(done, _ int64) { cfg.Progress(done, total) }
	}
	st, err := Evaluate(ctx, m, ex, s, cfg.Config, cfg.Runs, cfg.Seed, "smc/run", opt)
	rep := Report{Scheme: s.Name, Mutant: s.Mutant, Summary: s.Summary, Model: m.String(), N: cfg.N, K: cfg.K,
		Runs: st.Runs, Seed: cfg.Seed, Strings: len(ex.Post), ZExact: ex.Z}
	if s.fc == fcBisect && s.kind == kindFC {
		rep.BisectTol = cfg.BisectTol
		if rep.BisectTol == 0 {
			rep.BisectTol = DefaultBisectTol
		}
	}
	fill(&rep, st, ex.Z)
	if err != nil || st.Runs < 2 {
		return rep, err
	}
	var large *Stats
	if runsLarge > 0 {
		big := cfg.Config
		big.N *= ConvergenceFactor
		if cfg.Progress != nil {
			opt.Progress = func(done, _ int64) { cfg.Progress(cfg.Runs+done, total) }
		}
		lst, err := Evaluate(ctx, m, ex, s, big, runsLarge, cfg.Seed, "smc/run-large", opt)
		if err != nil {
			return rep, err
		}
		large = &lst
	}
	rep.Judgement = Judge(st, large, cfg.N, cfg.Level, cfg.Power)
	return rep, nil
}

func fill(rep *Report, st Stats, Z float64) {
	rep.ZRatio, rep.ZRatioCI95 = st.ZRatio.Mean, [2]float64{st.ZRatio.Lo, st.ZRatio.Hi}
	rep.ZHatMean, rep.ZHatCI95 = Z*st.ZRatio.Mean, [2]float64{Z * st.ZRatio.Lo, Z * st.ZRatio.Hi}
	rep.RelativeVariance = st.ZRatio.StdDev * st.ZRatio.StdDev
	rep.PosteriorTV, rep.PosteriorTVCI95 = st.TV.Mean, [2]float64{st.TV.Lo, st.TV.Hi}
	rep.MeanESS, rep.ZeroRuns = st.ESS, st.ZeroRuns
	rep.ParticlesMean, rep.ParticlesMin, rep.ParticlesMax = st.SizeMean, st.SizeMin, st.SizeMax
}

// Text renders the report for humans.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s\nN = %d, K = %d, %d runs, seed %d\n", r.Scheme, r.Model, r.N, r.K, r.Runs, r.Seed)
	fmt.Fprintf(&b, "Z exact %.6g; E[Ẑ] %.6g [%.6g, %.6g] (95%%); E[Ẑ]/Z %.5f [%.5f, %.5f]; Var(Ẑ)/Z² %.4g\n",
		r.ZExact, r.ZHatMean, r.ZHatCI95[0], r.ZHatCI95[1], r.ZRatio, r.ZRatioCI95[0], r.ZRatioCI95[1], r.RelativeVariance)
	fmt.Fprintf(&b, "posterior TV %.4f [%.4f, %.4f]; mean ESS %.2f; particles %.3f (min %d, max %d); runs with Ẑ = 0: %d\n",
		r.PosteriorTV, r.PosteriorTVCI95[0], r.PosteriorTVCI95[1], r.MeanESS, r.ParticlesMean, r.ParticlesMin, r.ParticlesMax, r.ZeroRuns)
	fmt.Fprintf(&b, "E[Ẑ] = Z: z = %.3f, p = %.4g, Holm-adjusted p = %.4g; at its Holm share %g of the level detects |E[Ẑ]/Z − 1| >= %.4g with power %g\n",
		r.Z.Statistic, r.Z.PValue, r.Z.PHolm, r.Z.Level, r.Z.MinDetectableRelBias, r.Z.Power)
	fmt.Fprintf(&b, "particle measure per string (%d groups): max |z| = %.3f (%s), Bonferroni p = %.4g, Holm-adjusted p = %.4g\n",
		r.Posterior.Groups, r.Posterior.MaxAbsZ, r.Posterior.Worst, r.Posterior.PValue, r.Posterior.PHolm)
	if c := r.Converge; c != nil {
		fmt.Fprintf(&b, "posterior TV at N = %d: %.4f, at N = %d: %.4f (ratio %.3f, z = %.2f, converging: %v)\n", r.N, c.TVSmall, c.NLarge, c.TVLarge, c.Ratio, c.Statistic, c.Converging)
	}
	fmt.Fprintf(&b, "verdict: %s\n  %s\n", r.Verdict, r.Claim)
	return b.String()
}
