package experiments

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// Verdicts of the audit beyond check's (NotDetected, Violated, Passed).
const (
	Lossy = "lossy"
	NA    = table.NA
	// Preserved is the exact check's verdict when the emitted law equals
	// the target's to sim.ExactTol on every enumerated pair: a proof for
	// those pairs, which a statistical check never gives.
	Preserved = "preserved"
)

// AuditPairs are the model pairs the audit enumerates exactly: three
// seeded Markov pairs of orders 1 and 2 and the two-token example
// p = (1/3, 2/3), q = (2/3, 1/3) of block verification (Sun et al. 2024,
// arXiv 2403.10444; docs/rules.md#papers).
func AuditPairs() ([]sim.Pair, []int, error) {
	specs := []struct {
		spec  string
		gamma int
	}{
		{AuditEmittedSource, AuditEmittedGamma},
		{"markov:V=3,order=2,a=0.5,quality=0.3,seed=2", 3},
		{"markov:V=5,order=1,a=0.3,quality=0.8,seed=3", 2},
	}
	pairs := []sim.Pair{{Name: "fixed:p=1/3,2/3;q=2/3,1/3", P: sim.Fixed{1.0 / 3, 2.0 / 3}, Q: sim.Fixed{2.0 / 3, 1.0 / 3}}}
	gammas := []int{2}
	for _, s := range specs {
		src, err := source.New(s.spec, s.gamma, 0, 0) // pairs of V <= 5: the default budget
		if err != nil {
			return nil, nil, err
		}
		pair, _ := sim.PairOf(src)
		pairs = append(pairs, pair)
		gammas = append(gammas, s.gamma)
	}
	return pairs, gammas, nil
}

// AuditSource is the large synthetic pair of the audit's statistical
// check, and AuditGreedySource the small model pair it also checks every
// rule on (the only one for greedy rules: a greedy target is one-hot,
// which positional pools do not test).
const (
	AuditSource       = "dirichlet:V=2048,a=0.1,beta=0.7,contexts=16,seed=11"
	AuditGreedySource = "markov:V=4,order=1,a=0.5,quality=0.5,seed=1"
	auditGamma        = AuditStatGamma
	// AuditStatGamma is the γ of the audit's statistical checks (the
	// α̂ and mean_emitted columns).
	AuditStatGamma = 4
	// AuditEmittedSource is the pair whose exact E[emitted] the audit
	// reports (expected_emitted), at γ = AuditEmittedGamma: AuditPairs'
	// entry auditEmittedPair.
	AuditEmittedSource = "markov:V=4,order=1,a=0.5,quality=0.5,seed=1"
	AuditEmittedGamma  = 3
	auditEmittedPair   = 1
)

// The audit sizes each row's statistical checks by the total variation
// they must detect with power check.DefaultPower, not by one count for
// all. Lossless rules, strict settings and mutants must reach AuditTV on
// the pool in their PIT tests (check.PITFamily, the sized_tv column):
// auditTrials pool trials (auditPairTrials on the Markov pair) do. A lossy
// rule at its lossy setting is there to be seen lossy, and must reach
// only AuditLossyTV, under half the least exact TV of a lossy chain row on
// the audit pairs (0.246, mentored decoding): auditLossyTrials
// (auditLossyPairTrials) do. The sizes name one family, not the finest
// test of whatever battery the check has, so a family added later
// changes the min_detectable_tv column but not what the counts were
// chosen for. A test's minimum detectable TV is sqrt(λ/(4n))
// (stattest.MinDetectableTV), but its grid, and so λ, grows with n, so the
// counts are not one formula of the TV: TestAuditSizes checks that each
// reaches its TV and is not oversized. At AuditTV the lossy rows, which
// solve for a law over V at every position, took 95% of the audit's time.
const (
	AuditTV              = 0.02
	AuditLossyTV         = 0.1
	auditTrials          = 100000
	auditPairTrials      = 50000
	auditLossyTrials     = 2000
	auditLossyPairTrials = 1000
)

// sizedTV is the TV a row's check is sized by (the sized_tv column): the
// smallest minimum detectable TV of its PIT tests (check.PITFamily), the
// finest family of the battery the counts were chosen for, NaN where the
// check has none. The row's min_detectable_tv is the finest of all its
// tests, which a test family added later may lower without resizing the
// row (a coarse test of one degree of freedom can state a smaller TV in
// its own, weaker quantity).
func sizedTV(res check.Result) float64 {
	tv, _, ok := res.FamilyMinTV(check.PITFamily)
	if !ok {
		return math.NaN()
	}
	return tv
}

// auditSize is the pool and pair trials of a row, before the run's scale:
// a lossy row's (lossy) must reach AuditLossyTV, any other AuditTV.
func auditSize(lossy bool) (pool, pair int64) {
	if lossy {
		return auditLossyTrials, auditLossyPairTrials
	}
	return auditTrials, auditPairTrials
}

func paramString(ps algos.Params) string { return ps.String() }

// auditLevel is the level of each statistical test of one audit row:
// check.DefaultLevel over the number of tests, two per chain-rule row (a
// pool and a pair) and one per tree-rule row (the pair).
func auditLevel() float64 {
	n := 0
	for _, e := range algos.All() {
		n += 2
		if e.Strict != nil {
			n += 2
		}
	}
	n += len(algos.AllTree())
	return check.DefaultLevel / float64(n)
}

// statOnly is the verdict of a check's statistical tests alone: violated
// when their smallest Holm-adjusted p-value is below the level,
// inconclusive when the check found no deviation but some test had no
// power, else not_detected. The check's own verdict also folds in the
// scripted-coin edge cases and the outcome invariants; the audit shows
// those as their own columns, so a violation found only by the edge cases
// is not shown as a statistical one with p = 1.
func statOnly(res check.Result, level float64) string {
	switch {
	case res.PValue < level:
		return check.Violated
	case res.Verdict == check.Inconclusive:
		return check.Inconclusive
	}
	return check.NotDetected
}

// auditKind is a rule's kind in the audit: prefix + mutant, lossy or
// rule (prefix "tree-" for tree rules).
func auditKind(prefix string, in algos.Info) string {
	switch {
	case in.Mutant:
		return prefix + "mutant"
	case in.Lossy:
		return prefix + "lossy"
	}
	return prefix + "rule"
}

// auditParams are the settings of the audit's row of a lossy rule where
// its defaults happen to be lossless on the audit's pairs (the rules not
// listed run at their defaults): Chow's cascade defers everywhere at
// α = 0.1 there.
var auditParams = map[string]algos.Params{"cascade-chow": {"alpha": 0.5}}

// auditPlants are the audit's rows planted near the threshold: a mutant
// at a setting whose exact TV on the audit pairs (the exact_tv column)
// lies between one and two times the TV its row's check states it
// detects with power 0.9 in the tests it is sized by (sized_tv), where every catalogued
// mutant but two deviates several times over. mutant-q-mismatch at
// T = 29/32 (drafts sampled at temperature 0.90625, ratio and residual
// from the raw law; a dyadic T keeps its weights square roots, not
// math.Pow) deviates by an exact TV of 0.031 against the 0.0198 the pool
// check states. The two TVs are of different quantities (the exact one
// over the pairs' first γ+1 tokens, the stated one the PIT tests' on
// the pool), so the row shows a detection at a deviation 1.6 times the
// stated figure, not the power there, which the calibration table
// measures. TestAuditPlant checks the ratio.
var auditPlants = []struct {
	name   string
	params algos.Params
}{{"mutant-q-mismatch", algos.Params{"T": 0.90625}}}

// checkAuditParams returns an error naming the first setting of m that is
// not a lossy rule's valid parameters.
func checkAuditParams(m map[string]algos.Params) error {
	for name, ps := range m {
		e, err := algos.Lookup(name)
		if err == nil && !e.Lossy {
			err = fmt.Errorf("%s is not a lossy rule", name)
		}
		if err == nil {
			_, err = e.Resolve(ps)
		}
		if err != nil {
			return fmt.Errorf("audit parameters: %w", err)
		}
	}
	return nil
}

func auditCells(Config) ([]Cell, error) {
	if err := checkAuditParams(auditParams); err != nil {
		return nil, err
	}
	var cells []Cell
	for _, e := range algos.All() {
		kind := auditKind("", e.Info)
		// A lossy rule's audit row runs at its auditParams (defaults where
		// it has none), and a rule with a strict point gets a second row
		// there, expected lossless.
		cells = append(cells, Cell{Key: []KV{{K: "algorithm", V: e.Name}, {K: "params", V: paramString(auditParams[e.Name])}, {K: "kind", V: kind}}})
		if e.Strict != nil {
			cells = append(cells, Cell{Key: []KV{{K: "algorithm", V: e.Name}, {K: "params", V: paramString(e.Strict)}, {K: "kind", V: "strict"}}})
		}
	}
	for _, pl := range auditPlants {
		e, err := algos.Lookup(pl.name)
		if err == nil && !e.Mutant {
			err = fmt.Errorf("%s is not a mutant", pl.name)
		}
		if err == nil {
			_, err = e.Resolve(pl.params)
		}
		if err != nil {
			return nil, fmt.Errorf("audit plants: %w", err)
		}
		cells = append(cells, Cell{Key: []KV{{K: "algorithm", V: pl.name}, {K: "params", V: paramString(pl.params)}, {K: "kind", V: "plant"}}})
	}
	for _, e := range algos.AllTree() {
		kind := auditKind("tree-", e.Info)
		cells = append(cells, Cell{Key: []KV{{K: "algorithm", V: e.Name}, {K: "params", V: ""}, {K: "kind", V: kind}}})
	}
	return cells, nil
}

// Tree rules are audited with k = auditK candidates of depth auditDepth,
// each drafted the way the rule is registered to be run, and rules that
// verify batches get a cross-row test of auditBatch two-row batches.
const (
	auditK     = 2
	auditDepth = 2
	auditBatch = 4000
)

// auditTree audits the tree rule e: the exact law on the audit pairs, the
// batch rows' independence, and the statistical check, assembled into
// one row.
func auditTree(ctx context.Context, cfg Config, e algos.TreeEntry, kind string, seed uint64) ([]Row, error) {
	expected := auditExpected(strings.TrimPrefix(kind, "tree-"))
	a, err := e.Build(nil)
	if err != nil {
		return nil, err
	}
	pairs, _, err := AuditPairs()
	if err != nil {
		return nil, err
	}
	lw, hasLaw := a.(sim.TreeLawer)
	ex := noExact()
	if hasLaw {
		if ex, err = treeExact(e, lw, pairs); err != nil {
			return nil, err
		}
	}
	batch, err := treeBatch(cfg, e, a, pairs[1], seed)
	if err != nil {
		return nil, err
	}
	level := auditLevel()
	res, err := treeStat(ctx, cfg, e, a, level)
	if err != nil {
		return nil, err
	}
	statVerdict := statOnly(res, level)
	if e.Lossy && statVerdict == check.Violated {
		statVerdict = Lossy
	}
	verdict := treeVerdict(ex.verdict, statVerdict, batch, res.Invalid, expected)
	return []Row{{{K: "expected", V: expected}, {K: "exact_verdict", V: ex.verdict}, {K: "max_abs_error", V: ex.maxErr}, {K: "kl", V: ex.kl},
		{K: "exact_tv", V: ex.tv},
		{K: "expected_emitted", V: ex.emitted}, {K: "statistical_verdict", V: statVerdict}, {K: "p_value", V: math.Min(1, check.DefaultLevel/level*res.PValue)},
		{K: "min_detectable_tv", V: res.MinDetectableTV}, {K: "sized_tv", V: sizedTV(res)},
		{K: "alpha_hat", V: math.NaN()}, {K: "mean_emitted", V: res.MeanEmitted}, {K: "trials", V: res.Trials}, {K: "pair_trials", V: res.Trials}, {K: "invalid_outcomes", V: res.Invalid},
		{K: "edge_verdict", V: batch}, {K: "verdict", V: verdict}, {K: "ok", V: verdict == expected},
		{K: "exact_source", V: AuditEmittedSource}, {K: "exact_gamma", V: int64(auditDepth)}, {K: "stat_source", V: AuditGreedySource}, {K: "stat_gamma", V: int64(auditDepth)}}}, nil
}

// auditExpected is the verdict a rule of the audit kind (its "tree-"
// prefix removed) is expected to get: violated for a mutant and a plant,
// lossy for a lossy rule, not detected otherwise.
func auditExpected(kind string) string {
	switch kind {
	case "mutant", "plant":
		return check.Violated
	case "lossy":
		return Lossy
	}
	return check.NotDetected
}

// exactAudit is the exact check's columns: its verdict, the largest
// absolute error, KL and TV over the audit pairs, and the expected
// emitted count on the auditEmittedPair.
type exactAudit struct {
	verdict        string
	maxErr, kl, tv float64
	emitted        float64
}

// noExact is the exact columns of a rule without a law: NA and NaN.
func noExact() exactAudit {
	return exactAudit{verdict: NA, maxErr: math.NaN(), kl: math.NaN(), tv: math.NaN(), emitted: math.NaN()}
}

// add folds one pair's exact result into the maxima.
func (x *exactAudit) add(maxErr, kl, tv float64) {
	x.maxErr, x.kl, x.tv = math.Max(x.maxErr, maxErr), math.Max(x.kl, kl), math.Max(x.tv, tv)
}

// judge sets the verdict from the largest error: preserved below
// sim.ExactTol, else violated, or lossy for a rule that claims to be.
func (x *exactAudit) judge(lossy bool) {
	x.verdict = Preserved
	if x.maxErr >= sim.ExactTol {
		x.verdict = check.Violated
		if lossy {
			x.verdict = Lossy
		}
	}
}

// treeExact enumerates the tree rule's law on every audit pair but the
// first, with k = auditK candidates of depth auditDepth drawn by e's
// drafter.
func treeExact(e algos.TreeEntry, lw sim.TreeLawer, pairs []sim.Pair) (exactAudit, error) {
	x := exactAudit{emitted: math.NaN()}
	for i, pr := range pairs[1:] {
		d, err := draft.NewTree(e.Draft, draft.Config{Q: pr.Q, K: auditK, Depth: auditDepth})
		if err != nil {
			return exactAudit{}, err
		}
		r, err := sim.ExactTree(pr.P, d, lw, sim.TreeExactConfig{})
		if err != nil {
			return exactAudit{}, fmt.Errorf("exact on %s: %w", pr.Name, err)
		}
		x.add(r.MaxAbsError, r.KL, r.TV)
		if i+1 == auditEmittedPair {
			x.emitted = r.ExpectedEmitted
		}
	}
	x.judge(e.Lossy)
	return x, nil
}

// treeBatch tests that the rows of a batch are independent, for a rule
// that verifies batches (NA otherwise): two identical prompts agree on
// their first token with probability Σ p² (the first token is a
// p-sample); the Wilson interval at 1-1e-6 must cover it.
func treeBatch(cfg Config, e algos.TreeEntry, a sim.TreeAlgorithm, pr sim.Pair, seed uint64) (string, error) {
	ba, ok := a.(algos.BatchTreeAlgorithm)
	if !ok {
		return NA, nil
	}
	d, err := draft.NewTree(e.Draft, draft.Config{Q: pr.Q, K: auditK, Depth: 1})
	if err != nil {
		return "", err
	}
	p := make([]float64, pr.P.Vocab())
	pr.P.Next(nil, p)
	want := 0.0
	for _, v := range p {
		want += v * v
	}
	n := int(cfg.Trials(auditBatch))
	agree := algos.CrossRowAgreement(sim.NewRand(seed, sim.StreamID("audit/batch")), ba, d, pr.P, nil, n)
	lo, hi := stattest.Wilson(int64(agree), int64(n), 1-1e-6)
	if want < lo || want > hi {
		return check.Violated, nil
	}
	return check.Passed, nil
}

// treeStat runs the statistical check on the audit's small model pair (a
// pool's positions cost a tree rule its law at every node: V = 2048 took
// minutes per rule), with the drafter the rule is registered with.
func treeStat(ctx context.Context, cfg Config, e algos.TreeEntry, a sim.TreeAlgorithm, level float64) (check.Result, error) {
	psrc, err := source.New(AuditGreedySource, auditDepth, 0, cfg.MemBudget)
	if err != nil {
		return check.Result{}, err
	}
	rule := check.Rule{Name: e.Name, Tree: a, Draft: e.Draft, K: auditK, LawName: e.Name,
		Drafter: func(q sim.Model, depth int) (sim.Drafter, error) {
			return draft.NewTree(e.Draft, draft.Config{Q: q, K: auditK, Depth: depth})
		}}
	if lw, ok := a.(sim.TreeLawer); ok {
		rule.TreeLaw = lw
	}
	_, pairTrials := auditSize(false)
	return check.Check(ctx, psrc, rule, check.Config{Gamma: auditDepth, Trials: cfg.Trials(pairTrials),
		Seed: sim.StreamID("audit/statistical", cfg.Seed), Level: level, Workers: cfg.Workers})
}

// treeVerdict is a tree rule's overall verdict: violated if any check
// found a violation or an outcome was invalid (lossy when the rule is
// expected to be), else not detected.
func treeVerdict(exact, stat, batch string, invalid int64, expected string) string {
	verdict := exact
	if verdict == NA || verdict == Preserved {
		verdict = check.NotDetected // no violation found by any check
	}
	for _, v := range []string{stat, batch} {
		if v == check.Violated {
			verdict = check.Violated
		}
	}
	if invalid > 0 {
		verdict = check.Violated
	}
	if expected == Lossy && verdict == check.Violated {
		verdict = Lossy
	}
	return verdict
}

func parseParamString(s string) (algos.Params, error) {
	ps := algos.Params{}
	if s == "" {
		return ps, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		var f float64
		if _, err := fmt.Sscan(v, &f); err != nil {
			return nil, fmt.Errorf("audit: bad parameter %q", kv)
		}
		ps[k] = f
	}
	return ps, nil
}

// auditRun audits the cell's rule: a tree rule by auditTree; a chain rule
// by exact enumeration, the statistical checks and the edge cases,
// assembled into one row.
func auditRun(ctx context.Context, cfg Config, c Cell, seed uint64) ([]Row, error) {
	name, _ := c.Key[0].V.(string)
	pstr, _ := c.Key[1].V.(string)
	kind, _ := c.Key[2].V.(string)
	if strings.HasPrefix(kind, "tree-") {
		te, err := algos.LookupTree(name)
		if err != nil {
			return nil, err
		}
		return auditTree(ctx, cfg, te, kind, seed)
	}
	e, err := algos.Lookup(name)
	if err != nil {
		return nil, err
	}
	ps, err := parseParamString(pstr)
	if err != nil {
		return nil, err
	}
	a, err := e.Build(ps)
	if err != nil {
		return nil, err
	}
	expected := auditExpected(kind)
	lossy := e.Lossy && kind != "strict"
	row := Row{{K: "expected", V: expected}}

	// 1. Exact enumeration on every audit pair.
	ex := noExact()
	if lw, ok := a.(sim.Lawer); ok {
		if ex, err = chainExact(e, lw, lossy); err != nil {
			return nil, err
		}
	}
	// expected_emitted is exact on one pair only (AuditEmittedSource), at
	// its own γ: the columns say which, so it is never read beside the
	// Monte Carlo columns of another source as if they were comparable.
	row = append(row, KV{K: "exact_verdict", V: ex.verdict}, KV{K: "max_abs_error", V: ex.maxErr}, KV{K: "kl", V: ex.kl}, KV{K: "exact_tv", V: ex.tv}, KV{K: "expected_emitted", V: ex.emitted},
		KV{K: "exact_source", V: AuditEmittedSource}, KV{K: "exact_gamma", V: int64(AuditEmittedGamma)})

	// 2. Statistical checks.
	st, err := chainStat(ctx, cfg, e, a, lossy)
	if err != nil {
		return nil, err
	}
	row = append(row, KV{K: "statistical_verdict", V: st.verdict}, KV{K: "p_value", V: st.p}, KV{K: "min_detectable_tv", V: st.res.MinDetectableTV}, KV{K: "sized_tv", V: sizedTV(st.res)},
		KV{K: "alpha_hat", V: st.res.AlphaHat}, KV{K: "mean_emitted", V: st.res.MeanEmitted}, KV{K: "trials", V: st.res.Trials}, KV{K: "pair_trials", V: st.pairTrials}, KV{K: "invalid_outcomes", V: st.invalid},
		KV{K: "stat_source", V: st.source}, KV{K: "stat_gamma", V: int64(auditGamma)})

	// 3. Scripted-coin edge cases (lossless claims only).
	edge := NA
	if !lossy {
		edge = check.Passed
		if check.EdgeCheck(a) != nil {
			edge = check.Violated
		}
	}
	row = append(row, KV{K: "edge_verdict", V: edge})

	verdict := chainVerdict(ex.verdict, st.verdict, edge, st.invalid, expected)
	row = append(row, KV{K: "verdict", V: verdict}, KV{K: "ok", V: verdict == expected})
	return []Row{row}, nil
}

// chainExact enumerates the chain rule's law on every audit pair at its
// γ; lossy says the rule claims to be lossy (a violation is then lossy).
func chainExact(e algos.Entry, lw sim.Lawer, lossy bool) (exactAudit, error) {
	pairs, gammas, err := AuditPairs()
	if err != nil {
		return exactAudit{}, err
	}
	x := exactAudit{emitted: math.NaN()}
	for i, pr := range pairs {
		r, err := sim.Exact(pr, lw, sim.ExactConfig{Gamma: gammas[i], Greedy: e.Greedy})
		if err != nil {
			return exactAudit{}, fmt.Errorf("exact on %s: %w", pr.Name, err)
		}
		x.add(r.MaxAbsError, r.KL, r.TV)
		if i == auditEmittedPair {
			x.emitted = r.ExpectedEmitted
		}
	}
	x.judge(lossy)
	return x, nil
}

// chainStatAudit is the statistical columns of a chain rule: the verdict,
// the Bonferroni-adjusted p-value, the result whose estimates are
// reported, the invalid outcomes counted and the source tested.
type chainStatAudit struct {
	verdict string
	p       float64
	res     check.Result
	invalid int64
	source  string
	// pairTrials is the Markov pair check's trials (the pool's are
	// res.Trials, or the pair's for greedy rules).
	pairTrials int64
}

// chainStat runs the statistical checks: on a large synthetic pool
// (skipped for greedy rules, whose one-hot target a pool does not test)
// and on a small model pair, each at half the level (Bonferroni), so a
// bias that is tiny on the large vocabulary (exact match accepts with
// Σ p·q) is still seen on the small one.
//
// Every row uses the same seed (common random numbers: all rules see the
// same drafts, so rules with identical outcomes get identical verdicts),
// and the family-wise level of check.DefaultLevel is split over the rows
// and the two tests (Bonferroni), so a false alarm anywhere in the audit
// has probability at most 0.01.
func chainStat(ctx context.Context, cfg Config, e algos.Entry, a sim.Algorithm, lossy bool) (chainStatAudit, error) {
	level := auditLevel()
	cseed := sim.StreamID("audit/statistical", cfg.Seed)
	poolTrials, pairTrials := auditSize(lossy)
	ccfg := check.Config{Gamma: auditGamma, Trials: cfg.Trials(poolTrials), Seed: cseed, Level: level,
		Greedy: e.Greedy, Workers: cfg.Workers, Progress: cfg.Progress}
	psrc, err := source.New(AuditGreedySource, auditGamma, 0, cfg.MemBudget)
	if err != nil {
		return chainStatAudit{}, err
	}
	pair, _ := sim.PairOf(psrc)
	res, err := check.Pair(ctx, pair, a, check.Config{Gamma: auditGamma, Trials: cfg.Trials(pairTrials), Seed: cseed,
		Level: level, Greedy: e.Greedy, Workers: cfg.Workers})
	if err != nil {
		return chainStatAudit{}, err
	}
	pairRes := res
	st := chainStatAudit{source: AuditGreedySource, pairTrials: pairRes.Trials}
	if !e.Greedy {
		st.source = AuditSource
		pl, err := auditPool(cfg.MemBudget)
		if err != nil {
			return chainStatAudit{}, err
		}
		if res, err = check.Pool(ctx, pl, a, ccfg); err != nil {
			return chainStatAudit{}, err
		}
	}
	// The statistical verdict is the tests' alone (statOnly), on the pool
	// or the pair; the edge cases and the outcome invariants are their own
	// columns. The reported p-value is Bonferroni-adjusted like the level:
	// it is compared with check.DefaultLevel.
	st.verdict = statOnly(res, level)
	if v := statOnly(pairRes, level); v == check.Violated || st.verdict == check.NotDetected {
		st.verdict = v
	}
	st.invalid = pairRes.Invalid
	if !e.Greedy {
		st.invalid += res.Invalid
	}
	st.p = math.Min(1, check.DefaultLevel/level*math.Min(res.PValue, pairRes.PValue))
	if lossy && st.verdict == check.Violated {
		st.verdict = Lossy
	}
	st.res = res
	return st, nil
}

// auditPools keeps the audit's pool (AuditSource at auditGamma; its spec
// fixes the seed) per memory budget once built: every chain rule's cell
// checks the same rows, and a check reads a pool without changing it
// (sim.NewPoolRows), keeping its binning with it (sim.Pool.Derived).
var auditPools struct {
	sync.Mutex
	m map[int64]*sim.Pool
}

// auditPool returns the audit's pool, built at the first call.
func auditPool(budget int64) (*sim.Pool, error) {
	auditPools.Lock()
	defer auditPools.Unlock()
	if pl := auditPools.m[budget]; pl != nil {
		return pl, nil
	}
	src, err := source.New(AuditSource, auditGamma, 0, budget)
	if err != nil {
		return nil, err
	}
	pl, _ := sim.PoolOf(src)
	if auditPools.m == nil {
		auditPools.m = map[int64]*sim.Pool{}
	}
	auditPools.m[budget] = pl
	return pl, nil
}

// chainVerdict is a chain rule's overall verdict: violated if any check
// found a violation or an outcome was invalid, lossy if a check found the
// rule lossy (or it is expected lossy and violated), else not detected.
func chainVerdict(exact, stat, edge string, invalid int64, expected string) string {
	verdict := check.NotDetected
	for _, v := range []string{exact, stat, edge} {
		if v == Lossy && verdict == check.NotDetected {
			verdict = Lossy
		}
		if v == check.Violated {
			verdict = check.Violated
		}
	}
	if invalid > 0 {
		verdict = check.Violated
	}
	if expected == Lossy && verdict == check.Violated {
		verdict = Lossy
	}
	return verdict
}

func init() {
	Register(Experiment{Name: "audit", Main: 80, NumbersAt: 75, Section: "The losslessness audit", Summary: "every rule and mutant through the exact engine, a statistical check and the edge cases",
		Cells: auditCells, Run: auditRun,
		Figures: []Figure{{Name: "audit", Make: plots.Audit}},
		Tables:  []Table{{Name: "audit", Make: auditTable}},
		Numbers: []table.Number{
			{Macro: "AuditRows", Agg: table.Count, Doc: "audit rows"},
			{Macro: "AuditOK", Where: []string{"ok", "true"}, Agg: table.Count, Doc: "rows with the expected verdict"},
			{Macro: "AuditMutants", Where: []string{"kind", "mutant|tree-mutant"}, Agg: table.Count, Doc: "mutant rows (chain and tree)"},
			{Macro: "AuditTokenAlpha", Where: auditToken, Col: "alpha_hat", Digits: 3, Doc: "token α̂ (V = 2048 pool)"},
			{Macro: "AuditTokenEmitted", Where: auditToken, Col: "mean_emitted", Digits: 2, Doc: "token mean emitted"},
			{Macro: "AuditBlockEmitted", Where: []string{"algorithm", "block", "kind", "rule"}, Col: "mean_emitted", Digits: 2, Doc: "block mean emitted"},
			{Macro: "AuditTrials", Where: auditToken, Col: "trials", Doc: "statistical trials per lossless rule or mutant on the pool"},
			{Macro: "AuditPairTrials", Where: auditToken, Col: "pair_trials", Doc: "statistical trials per lossless rule or mutant on the Markov pair"},
			{Macro: "AuditLossyTrials", Where: []string{"algorithm", "lenience", "kind", "lossy"}, Col: "trials", Doc: "statistical trials per lossy row on the pool"},
			{Macro: "AuditLossyPairTrials", Where: []string{"algorithm", "lenience", "kind", "lossy"}, Col: "pair_trials", Doc: "statistical trials per lossy row on the Markov pair"},
			{Macro: "AuditLossyMinTV", Where: []string{"kind", "lossy"}, Agg: table.Max, Col: "min_detectable_tv", Digits: 3, Doc: "the largest TV a lossy row's check detects with power 0.9"},
			{Macro: "AuditPreserved", Where: []string{"exact_verdict", Preserved}, Agg: table.Count, Doc: "rows the exact engine shows lossless on its pairs"},
			{Macro: "AuditMutantsCaught", Where: []string{"kind", "mutant|tree-mutant", "verdict", check.Violated}, Agg: table.Count, Doc: "mutant rows called violated"},
			{Macro: "AuditMutantsStat", Where: []string{"kind", "mutant|tree-mutant", "statistical_verdict", check.Violated}, Agg: table.Count, Doc: "mutant rows the χ² tests alone call violated"},
			{Macro: "AuditTokenMinTV", Where: auditToken, Col: "sized_tv", Digits: 3, Doc: "the TV token's PIT tests on the pool detect with power 0.9 (the TV the rows are sized by)"},
			{Macro: "AuditPlants", Where: []string{"kind", "plant"}, Agg: table.Count, Doc: "rows planted near the threshold"},
			{Macro: "AuditPlantsCaught", Where: []string{"kind", "plant", "verdict", check.Violated}, Agg: table.Count, Doc: "planted rows called violated"},
			{Macro: "AuditPlantsStat", Where: []string{"kind", "plant", "statistical_verdict", check.Violated}, Agg: table.Count, Doc: "planted rows the χ² tests alone call violated"},
			{Macro: "AuditPlantTV", Where: []string{"kind", "plant"}, Agg: table.Max, Col: "exact_tv", Digits: 3, Doc: "the planted row's exact TV on the audit pairs"},
			{Macro: "AuditPlantMinTV", Where: []string{"kind", "plant"}, Agg: table.Max, Col: "sized_tv", Digits: 4, Doc: "the minimum detectable TV of the planted row's PIT tests (the TV the rows are sized by)"},
			{Macro: "AuditTreeMinTV", Where: []string{"kind", "tree-rule"}, Agg: table.Max, Col: "min_detectable_tv", Digits: 3, Doc: "the largest TV a tree rule's check detects with power 0.9"},
		}})
}

// plantNames lists the planted rows as "name at params", for captions.
func plantNames() string {
	var out []string
	for _, pl := range auditPlants {
		out = append(out, pl.name+" at "+paramString(pl.params))
	}
	return strings.Join(out, "; ")
}

// auditToken is the audit's row of token verification, which the paper
// quotes.
var auditToken = []string{"algorithm", "token", "kind", "rule"}

// auditTable is the audit's table: every rule and mutant. Its verdict
// columns are the parts of the final verdict: the exact engine, the χ²
// tests alone, the outcome invariants (invalid outcomes) and the
// scripted-coin edge cases (for tree rules: the batch cross-row test).
// Its Monte Carlo α̂ and its exact E[emitted] come from different sources
// at different γ; each header names its source, and rows whose source
// differs from the header's carry a mark the caption explains.
func auditTable(rows []Row) table.Text {
	t := table.Text{Caption: fmt.Sprintf("The losslessness audit. Each verdict column is one part of the final verdict: the exact engine (enumeration of small model pairs; max |π−p| over sequences), "+
		"the χ² tests alone (on the pool %s at γ = %d and the pair %s; tree rules† and greedy rules on the pair only; Bonferroni-adjusted p-value), the outcome invariants (invalid outcomes), "+
		"and the scripted-coin edge cases (for tree rules: independence of the rows of a batch). "+
		"Kind plant: a mutant at a setting whose exact TV is one to two times its row's minimum detectable TV (%s). "+
		"α̂ (MC) is the pool's Monte Carlo acceptance at γ = %d († greedy rules: the pair's); E[emitted] (exact) is the exact engine on the pair %s at γ = %d (‡ tree rules: k = 2 drafts of depth 2): another source and γ, so the two columns do not describe one setting.",
		AuditSource, AuditStatGamma, AuditGreedySource, plantNames(), AuditStatGamma, AuditEmittedSource, AuditEmittedGamma),
		Header: []string{"algorithm", "kind", "expected", "exact", "max |π−p|", "statistical", "p-value", "invalid", "edge", "verdict",
			fmt.Sprintf("α̂ (MC, γ=%d)", AuditStatGamma), fmt.Sprintf("E[emitted] (exact, γ=%d)", AuditEmittedGamma), "ok"},
		Right: table.RightCols(13, 4, 6, 7, 10, 11)}
	for _, r := range rows {
		mc, ex := "", ""
		if r.String("stat_source") == AuditGreedySource {
			mc = "†"
		}
		if g, ok := r.Float("exact_gamma"); ok && int(g) != AuditEmittedGamma {
			ex = "‡"
		}
		mark := func(s, m string) string {
			if s == NA {
				return s
			}
			return s + m
		}
		name := r.String("algorithm")
		if ps := r.String("params"); ps != "" {
			name += " (" + ps + ")"
		}
		stat := r.String("statistical_verdict")
		if strings.HasPrefix(r.String("kind"), "tree-") {
			stat += "†"
		}
		t.Rows = append(t.Rows, []string{name, r.String("kind"), r.String("expected"),
			r.String("exact_verdict"), sci(r, "max_abs_error"), stat, dec(r, "p_value", 3), dec(r, "invalid_outcomes", 0),
			r.String("edge_verdict"), r.String("verdict"), mark(dec(r, "alpha_hat", 3), mc),
			mark(dec(r, "expected_emitted", 3), ex), tick(r, "ok")})
	}
	return t
}
