package check

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
)

// Verdicts. A check shows a violation or fails to; it never shows that
// the law is preserved: NotDetected says that no test detected a
// deviation, and each test's minimum detectable TV says how large a
// deviation in its quantity would have been detected with the stated
// power.
const (
	NotDetected = "not_detected"
	Violated    = "violated"
	// Inconclusive: no deviation was found, but some test could not have
	// found one (no degrees of freedom, or too few trials for its
	// minimum detectable TV to be below 1).
	Inconclusive = "inconclusive"
	// Passed is the verdict of a deterministic check that was met: the
	// scripted edge cases (EdgeCheck, EdgeConform).
	Passed = "passed"
	// NotApplicable is the edge verdict of rules EdgeCheck cannot drive
	// (tree rules, external Steppers).
	NotApplicable = "n/a"
	// NotExercised is the edge verdict of an implementation whose outcomes
	// show that it did not use the scripted coins (identical rows under
	// identical scripted coins gave different outcomes): the cases did not
	// test it, so they neither passed nor failed.
	NotExercised = "not_exercised"
	// ContractBreach is the verdict of a check whose tests of the emitted
	// law found nothing but whose implementation broke the answer's
	// contract (the contract component: accepted tokens that are not the
	// drafts it returned); a test that rejects makes it Violated.
	ContractBreach = "contract_breach"
)

// Config configures a statistical check.
type Config struct {
	Gamma  int
	Trials int64
	Seed   uint64
	// Seconds, when positive, replaces Trials by a budget: pilot runs
	// measure the time per trial and the check runs as many trials as fill
	// the budget (Trials is then ignored; the result reports the count N
	// and equals that of a check with Trials = N).
	Seconds float64
	// Level is the family-wise significance level (default DefaultLevel);
	// Power is the power at which the minimum detectable TVs are reported
	// (default DefaultPower).
	Level, Power float64
	// Greedy compares against argmax decoding of the target.
	Greedy  bool
	Workers int
	// Batch is the number of steps handed to a Stepper per call (default
	// DefaultBatch). Batch u's steps draw from the streams keyed by u, so
	// results depend on Batch but not on Workers; an external
	// implementation, which answers a whole batch per round trip, uses the
	// protocol's batch size here.
	Batch int
	// Progress, if set, receives the number of finished trials.
	Progress func(done, total int64)
	// Candidates are named rules' exact laws to rank the sampler against:
	// the mean log-likelihood of its outcomes given their drafts under
	// each (Result.Fits), over the first steps of the check (chain rules;
	// as many as cost about as much as 5e8 row entries). It points a
	// violation to the planted bug it looks like, and a check that found
	// nothing to the rule whose conformance test would be more powerful.
	Candidates []Candidate
	// Bugs is the bug catalogue a violated check ranks (Result.Resembles):
	// each names a candidate whose law plants the bug, or the edge case
	// that shows it.
	Bugs []Suspect
	// Profile adds Result.Profile: per position, the observed and expected
	// mass of the emitted token's PIT in ProfileBins bins (token-index
	// order), for a report's figure.
	Profile bool
	// CrossRow adds the test that the rows of a batch are independent
	// (rows 2k and 2k+1 of every batch, with Batch >= 2): for samplers that
	// decide a batch in one call, such as external implementations, where
	// shared randomness across rows keeps each row's law exact.
	CrossRow bool
	// LawEvery runs the sampler-vs-law test on the trials t with
	// t mod LawEvery = 0 only (a selection by index, independent of the
	// outcomes, so the test stays exact on its subset). 0 chooses:
	// AutoLawEvery for a losslessness check of an in-process rule, whose
	// law (O((γ+1)·V) a step) would otherwise cost many times its
	// marginal tests; every trial for a conformance check (the law test is
	// its only test) and for external implementations (whose steps cost
	// far more than the law).
	LawEvery int64
	// RowKinds names the row kinds of a composed pool (an external
	// implementation's batch composition): context c is of kind
	// c mod len(RowKinds). With two or more on a pool, every test is also
	// run on each kind's trials (Result.RowKinds), in one Holm family
	// with the pooled tests.
	RowKinds []string
	// LawKindsOff, when set (one entry per row kind), leaves the kinds
	// with a non-empty entry out of the law test; the entry says why (a
	// conformance test to a rule whose draft length those rows do not
	// use, say).
	LawKindsOff []string
	// KindGammas, when set (one entry per row kind), is each kind's draft
	// length: rows of a kind with a shorter one than Gamma see only its
	// drafts, and the candidates' fits score them at it.
	KindGammas []int
	// Shard and Shards run shard Shard (0-based) of Shards of the check
	// (CheckState; 0/0 or 0/1 is the whole run): the units of ShardRange,
	// every layout sized for the whole run's Trials. A Seconds budget
	// does not apply to shards.
	Shard, Shards int
	// MemBudget is the most bytes the check's own input-sized storage may
	// take (0: sim.DefaultMemBudget): its per-state tallies and PIT tables,
	// one per worker and the total, and its batches of draft trees. A
	// check above it is refused before it starts, with an error wrapping
	// sim.ErrMemBudget that names the size and the flags that lower it.
	MemBudget int64
}

// lawEveryScale is the row entries of law per step that AutoLawEvery
// buys with one trial: the law test then costs about as much as the
// marginal tests' 4 (measured at V = 1,000, γ = 4: 5.4 µs a law against
// 0.6 µs a step for the rest, 0.0054 µs a row entry).
const lawEveryScale = 2048

// AutoLawEvery is the default LawEvery of an in-process rule's
// losslessness check: ⌈(γ+1)·V/2048⌉ (1 up to V·(γ+1) = 2,048; 3 at
// V = 1,000, γ = 4; 10 at V = 4,096), so the whole check costs at most
// about five times its marginal tests, the law test keeping a
// 1/√LawEvery share of its power per trial and most of its power per
// CPU-second.
func AutoLawEvery(gamma, v int) int64 {
	return max(1, (int64(gamma+1)*int64(v)+lawEveryScale-1)/lawEveryScale)
}

// Defaults of Config.
const (
	DefaultLevel = 0.01
	DefaultPower = 0.9
	// minPerBin is the expected count per bin the pool binning aims at.
	minPerBin = 20
	// maxBins bounds the bins per (context, position).
	maxBins = 256
	// maxJointCells bounds the cells of the full joint test on model
	// pairs (V^(γ+1)); the per-position conditional tests cover every
	// position whatever the size.
	maxJointCells = 1 << 16
	// lawBins is the number of coarse bins of the pools' dependence test
	// (at most lawBins per position).
	lawBins = 4
	// maxLawTestBins bounds the law test's bins per accepted length.
	maxLawTestBins = 32
	// DefaultBatch is the default of Config.Batch.
	DefaultBatch = 16
	// maxBatch bounds Config.Batch.
	maxBatch = 1 << 20
)

// lawTestBins returns the law test's PIT bins per accepted length for n
// trials at draft length g: about minPerBin trials per cell when the
// accepted lengths share the trials, between lawBins and maxLawTestBins.
// Finer bins see a next-token law that is wrong between tokens of similar
// probability, where the 4 bins of a fixed p/q order did not.
func lawTestBins(g int, n int64) int {
	return int(min(max(n/(int64(g+1)*minPerBin*4), lawBins), maxLawTestBins))
}

// Test is one test of a check.
type Test struct {
	Name string `json:"name"`
	// Family names the family that yielded the test (its section in a
	// state; docs/architecture.md lists them), "" (JSON null) for a test
	// assembled outside a check's families (generate, replay, smc).
	Family FamilyName `json:"family"`
	// Quantity names what MinDetTV bounds.
	Quantity string  `json:"quantity"`
	Stat     float64 `json:"stat"`
	DF       int     `json:"df"`
	PValue   float64 `json:"p_value"`
	PHolm    float64 `json:"p_holm"`
	Cells    int     `json:"cells"`
	// LevelShare is the level the minimum detectable TV is computed at:
	// Level/m, Holm's first step over the m tests.
	LevelShare float64 `json:"level_share"`
	// MinDetTV is the smallest deviation in Quantity the test detects
	// with the family's power at LevelShare: a TV for the χ² tests, the
	// deviation of a mean in its own units for a NormalTest (smc's
	// relative bias of Ẑ, say).
	MinDetTV float64 `json:"min_detectable_tv"`
	Pooled   int     `json:"pooled"`
	N        int64   `json:"n"`
	// Warnings are the test's statistical caveats (a list of messages in
	// JSON).
	Warnings diag.Warnings `json:"warnings,omitempty"`
}

// Result reports a statistical check.
type Result struct {
	// Verdict combines every test, the outcome invariants and the edge
	// cases: violated if any fails, inconclusive if none fails but some
	// test had no power, else not_detected (never "preserved": a check
	// only bounds what it could have missed); contract_breach when no test
	// rejected but a ContractBreach component was added.
	Verdict string `json:"verdict"`
	// Mode is "lossless" (tests against the target law) or
	// "conform:<rule>" (tests outcomes against a rule's exact conditional
	// law given each step's drafts).
	Mode string `json:"mode"`
	// PValue is the smallest Holm-adjusted p-value across Tests.
	PValue float64 `json:"p_value"`
	// Claim is one sentence saying what the check showed: the test that
	// rejected, or that none did and how large a deviation the finest test
	// would have detected. It never says the law is preserved.
	Claim string `json:"claim"`
	// MinDetectableTV is the smallest minimum detectable TV of the tests
	// (at its Holm share of the level), that of FinestTest, and
	// MinDetectableQuantity what it bounds; every test reports its own.
	MinDetectableTV       float64 `json:"min_detectable_tv"`
	MinDetectableQuantity string  `json:"min_detectable_quantity"`
	FinestTest            string  `json:"finest_test"`
	// MoreTrials is a trial count at which every test's minimum
	// detectable TV is about half of this run's (four times the trials).
	MoreTrials int64   `json:"more_trials"`
	Level      float64 `json:"level"`
	Power      float64 `json:"power"`
	Trials     int64   `json:"trials"`
	Seed       uint64  `json:"seed"`
	// CPUSeconds is the process CPU time the trials took, every worker
	// together (NaN, JSON null, where the platform does not say), and
	// TVAtOneCPUSecond the minimum detectable TV the same tests would
	// reach with one CPU-second, MinDetectableTV·√CPUSeconds: a test's
	// detectable TV falls as 1/√trials at fixed cells and trials cost CPU
	// time in proportion (approximate where the cells' number grows with
	// the trials), so it compares checks of different cost: smaller is
	// more power per second.
	CPUSeconds       float64 `json:"cpu_seconds"`
	TVAtOneCPUSecond float64 `json:"min_detectable_tv_at_one_cpu_second"`
	// LawEvery is the sampler-vs-law test's stride (Config.LawEvery): it
	// saw the trials t with t mod LawEvery = 0; 0 without a law test.
	LawEvery int64 `json:"law_every"`
	// AlphaHat is accepted draft tokens per examined draft position.
	AlphaHat     float64 `json:"alpha_hat"`
	MeanAccepted float64 `json:"mean_accepted"`
	MeanEmitted  float64 `json:"mean_emitted"`
	// EmittedCI is a 95% normal interval for MeanEmitted.
	EmittedCI [2]float64 `json:"mean_emitted_ci95"`
	// Invalid counts invalid outcomes (see the package doc; should be 0).
	Invalid int64  `json:"invalid_outcomes"`
	Tests   []Test `json:"tests"`
	// Edge is the scripted-coin verdict (EdgeCheck), EdgeMsg its failure:
	// part of a losslessness verdict, reported beside a conformance one.
	Edge    string `json:"edge_verdict"`
	EdgeMsg string `json:"edge_message,omitempty"`
	// EdgeConform is the scripted-coin verdict of a conformance check
	// (EdgeConform: an outcome the named rule's law gives probability 0),
	// part of its verdict; "n/a" in a losslessness check.
	EdgeConform    string `json:"edge_conform_verdict"`
	EdgeConformMsg string `json:"edge_conform_message,omitempty"`
	// Profile (with Config.Profile, losslessness checks) is, per position,
	// the observed and expected share of the emitted token's PIT in
	// ProfileBins equal bins in token-index order.
	Profile []PositionProfile `json:"profile,omitempty"`
	// Where lists, for the tests that rejected, the cells with the largest
	// standardised residuals, largest first: where the emitted law departs
	// from the hypothesis.
	Where []Deviation `json:"where,omitempty"`
	// Assumptions lists assumptions of the tests that the data contradict
	// (rows of a batch found dependent: every other test assumes
	// independent rows); their p-values are then not valid.
	Assumptions []string `json:"assumptions,omitempty"`
	// Interrupted is set when the check was cancelled; the result then
	// holds the finished trials only.
	Interrupted bool `json:"interrupted"`
	// Fits rank Config.Candidates by how well each law explains the
	// outcomes, best first; empty without candidates.
	Fits []Fit `json:"fits,omitempty"`
	// Resembles (a violated check with Config.Bugs) lists the catalogued
	// bugs the outcomes fit better than the nominal rule by more than
	// ChanceThreshold, best first; empty when no known bug fits, null
	// otherwise.
	Resembles []Resemblance `json:"resembles"`
	// Components are parts of the verdict that the statistical tests do
	// not see, added by the caller with AddComponent (the determinism of
	// an external implementation's seeded rows, say).
	Components []Component `json:"components,omitempty"`
	// RowKinds (with Config.RowKinds) reports every test again per row
	// kind, and each kind's verdict: the kinds that fail are those named
	// violated.
	RowKinds []KindResult `json:"row_kinds,omitempty"`
	// suspects are Config.Bugs, kept so that a verdict changed after the
	// tests (SetEdge, AddComponent) ranks them again.
	suspects []Suspect
	// dependent names the rows-of-a-batch independence tests that
	// rejected, each with its Holm-adjusted p.
	dependent []string
	// edgeInVerdict: SetEdge folded a failed edge case into the verdict
	// (in a conformance check too), so the claim names it.
	edgeInVerdict bool
	// prefix is the layout of the prefix tests in re-drawn cells (nil
	// without them), for StatedTVBound.
	prefix *hashedLayout
}

// Candidate is a named rule's exact law (Config.Candidates); Lossless
// marks the rules that preserve the target law (not lossy rules, not
// planted bugs), Summary says what the rule does.
type Candidate struct {
	Name, Summary string
	Lossless      bool
	Law           sim.Lawer
}

// Fit is how well a candidate's law explains the observed outcomes: the
// mean, over Steps steps, of the log-probability of each step's outcome
// given its drafts under the candidate's law (an outcome the law makes
// impossible counts log 1e-300). Higher is closer.
type Fit struct {
	Name       string  `json:"name"`
	Summary    string  `json:"summary"`
	Lossless   bool    `json:"lossless"`
	MeanLogLik float64 `json:"mean_log_likelihood"`
	Steps      int64   `json:"steps"`
}

// Component is one part of a verdict beyond the statistical tests.
type Component struct {
	// Name says what was checked ("determinism"), Verdict what was found
	// (NotDetected, Violated, Inconclusive, NotApplicable or
	// ContractBreach) and Detail why,
	// with examples where it failed.
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
}

// AddComponent adds c to the result and folds it into the verdict: a
// violated component makes the result violated, an inconclusive one makes
// a preserved result inconclusive.
//
// A ContractBreach component makes a result that is not violated a
// contract breach: the answers broke their contract while no test of the
// law rejected.
func (r *Result) AddComponent(c Component) {
	r.Components = append(r.Components, c)
	switch {
	case c.Verdict == Violated:
		r.Verdict = Violated
	case c.Verdict == ContractBreach && r.Verdict != Violated:
		r.Verdict = ContractBreach
	case c.Verdict == Inconclusive && r.Verdict == NotDetected:
		r.Verdict = Inconclusive
	}
	r.claim()
	r.rerank()
}

// SetEdge sets the edge cases' verdict and message, folds a violation
// into the verdict, in a conformance check too (an external
// implementation's cases: a token of target probability 0 is impossible
// under every lossless rule's law), and rewrites the claim, which then
// names the failed case (and names edge cases that were not exercised,
// and how to let them be).
func (r *Result) SetEdge(verdict, msg string) {
	r.Edge, r.EdgeMsg = verdict, msg
	r.edgeInVerdict = verdict == Violated
	if verdict == Violated {
		r.Verdict = Violated
	}
	r.claim()
	r.rerank()
}

func (c *Config) defaults() error {
	if c.Level == 0 {
		c.Level = DefaultLevel
	}
	if c.LawEvery < 0 {
		return fmt.Errorf("check: law-every = %d; use 0 (chosen from γ and V) or a stride >= 1", c.LawEvery)
	}
	if c.Power == 0 {
		c.Power = DefaultPower
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	switch {
	case c.Batch < 1 || c.Batch > maxBatch:
		return fmt.Errorf("check: batch = %d; use 1 <= batch <= %d", c.Batch, maxBatch)
	case c.Trials < 1 && !(c.Seconds > 0):
		return fmt.Errorf("check: trials = %d; run at least 1 trial", c.Trials)
	case c.Seconds < 0 || math.IsNaN(c.Seconds):
		return fmt.Errorf("check: seconds = %g; give a positive budget or 0 for a fixed trial count", c.Seconds)
	case !(c.Level > 0 && c.Level < 1):
		return fmt.Errorf("check: level = %g; use a significance level in (0, 1)", c.Level)
	case !(c.Power > c.Level && c.Power < 1):
		return fmt.Errorf("check: power = %g; use a power in (level, 1)", c.Power)
	case c.Gamma < 1 || c.Gamma > sim.MaxGamma:
		return fmt.Errorf("check: gamma = %d; use 1 <= gamma <= %d", c.Gamma, sim.MaxGamma)
	case c.KindGammas != nil && len(c.KindGammas) != len(c.RowKinds):
		return fmt.Errorf("check: %d kind draft lengths for %d row kinds; give one per kind", len(c.KindGammas), len(c.RowKinds))
	case c.LawKindsOff != nil && len(c.LawKindsOff) != len(c.RowKinds):
		return fmt.Errorf("check: %d law-kinds-off entries for %d row kinds; give one per kind", len(c.LawKindsOff), len(c.RowKinds))
	case c.Shards < 0 || c.Shard < 0 || c.Shard >= max(c.Shards, 1):
		return diag.Usage(fmt.Errorf("check: shard %d of %d; give a shard I of N with 0 <= I < N", c.Shard, c.Shards))
	case c.Shards > 1 && c.Seconds > 0:
		return diag.Usage(fmt.Errorf("check: seconds = %g with %d shards; a time budget does not apply to shards (each must run its share of the same trial count): give the trials", c.Seconds, c.Shards))
	}
	return nil
}

// Pending is one test before the multiple-testing correction: a
// family's (Family.tests) or a caller's (UniformTest), evaluated with the
// others of its family by Evaluate.
type Pending struct {
	name, quantity string
	// family is the yielding family's name, set by familyTests.
	family string
	table  tabler
	het    *stattest.HeteroResult
	// oneHot: every group's target has a single possible cell, so the test
	// is "no impossible observation" and has power 1-(1-TV)^N.
	oneHot bool
	// independence marks the test of the rows' independence, which the
	// other tests assume.
	independence bool
	// cell describes cell c of group g of the test's table (or of the
	// Hetero accumulator hetero), for the report of where it deviates.
	cell   func(g, c int) string
	hetero *stattest.Hetero
	// normal is a NormalTest's statistic; total is the deviation in the
	// test's quantity that a test unable to detect it is powerless
	// against (0: a TV of 1).
	normal *normalTest
	total  float64
}

// tabler is a chi-squared test over a table of counts: goodness of fit
// (*stattest.Table) or independence (stattest.Independence).
type tabler interface {
	Test(minExpected float64) (stattest.Result, error)
	TopResiduals(k int) []stattest.Residual
}

// ProfileBins is the number of bins of a PositionProfile.
const ProfileBins = 16

// PositionProfile is the observed and expected share of position
// Position's PIT (1-based) in ProfileBins equal bins of [0, 1) in
// token-index order; under the hypothesis every expected share is
// 1/ProfileBins.
type PositionProfile struct {
	Position int       `json:"position"`
	Observed []float64 `json:"observed"`
	Expected []float64 `json:"expected"`
	N        int64     `json:"n"`
}

// Deviation is a cell where a rejecting test's counts depart most from
// what the hypothesis expects.
type Deviation struct {
	Test string `json:"test"`
	// Where says which cell: the position, the context or state, and the
	// bin or tokens.
	Where    string  `json:"where"`
	Observed int64   `json:"observed"`
	Expected float64 `json:"expected"`
	// Z is the standardised residual (Observed - Expected)/sqrt(Expected).
	Z float64 `json:"z"`
}

// maxWhere bounds the deviations a result lists, and whereTop the cells
// taken from each rejecting test.
const (
	maxWhere = 10
	whereTop = 3
)

// finish runs the tests and turns them into the verdict: Holm's
// correction across them and every row kind's tests (one family), each
// test's minimum detectable TV at its share Level/m of the level
// (Holm's first step, the most any single test gets before another has
// rejected), and the combined verdict.
func finish(r *Result, cfg Config, tests []Pending, kinds ...kindTests) error {
	all := slices.Clone(tests)
	labels := make([]string, len(tests))
	for _, k := range kinds {
		all = append(all, k.tests...)
		for range k.tests {
			labels = append(labels, k.name+": ")
		}
	}
	fam, err := Assemble(all, cfg.Level, cfg.Power)
	if err != nil {
		return err
	}
	// the finest and powerless tests are the pooled ones (r.Tests): a
	// row kind's tests see fewer trials
	ts := fam.Tests
	r.PValue = fam.PValue
	n0 := len(tests)
	r.Tests = append(r.Tests, ts[:n0]...)
	per, at := make([][]Test, len(kinds)), n0
	for k := range kinds {
		per[k] = ts[at : at+len(kinds[k].tests)]
		at += len(kinds[k].tests)
	}
	kindResults(r, cfg.Level, kinds, per)
	powerless := false
	for _, t := range r.Tests {
		powerless = powerless || !(t.MinDetTV < 1)
	}
	switch {
	case r.PValue < cfg.Level || r.Invalid > 0 || r.Edge == Violated && r.Mode == "lossless" || r.EdgeConform == Violated:
		r.Verdict = Violated
	case powerless || n0 == 0:
		r.Verdict = Inconclusive
	default:
		r.Verdict = NotDetected
	}
	r.where(cfg.Level, all, ts, labels)
	for i, pt := range tests {
		if pt.independence && r.Tests[i].PHolm < cfg.Level {
			d := fmt.Sprintf("%s: Holm-adjusted p = %.3g", pt.name, r.Tests[i].PHolm)
			r.dependent = append(r.dependent, d)
			r.Assumptions = append(r.Assumptions, "the rows of a batch are not independent ("+d+"); every other test assumes independent rows, so their p-values are not valid")
			for j := range r.Tests {
				if j != i {
					r.Tests[j].Warnings = append(r.Tests[j].Warnings, errors.New("assumes independent rows, which the cross-row test rejects"))
				}
			}
		}
	}
	if n0 > 0 {
		f := r.Tests[0]
		for _, t := range r.Tests[1:] {
			if t.MinDetTV < f.MinDetTV {
				f = t
			}
		}
		r.MinDetectableTV, r.MinDetectableQuantity, r.FinestTest = f.MinDetTV, f.Quantity, f.Name
		// Each test's minimum detectable TV falls about as 1/sqrt(trials):
		// four times the trials halve it.
		r.MoreTrials = 4 * max(r.Trials, 1)
	}
	r.claim()
	return nil
}

// Evaluate runs tests as one family at family-wise level level: each
// test with its minimum detectable TV (with power power) at its share
// level/m of the level (Holm's first step, the most any single test gets
// before another has rejected), then Holm's correction across them
// (Test.PHolm). It is the one assembly of every verdict's tests: a
// check's families (finish), a generation's and a replayed log's
// (package seq).
func Evaluate(tests []Pending, level, power float64) ([]Test, error) {
	m := len(tests)
	share := level / float64(max(m, 1))
	ts := make([]Test, m)
	ps := make([]float64, m)
	for i, pt := range tests {
		t, err := evalTest(pt, share, power)
		if err != nil {
			return nil, err
		}
		ts[i], ps[i] = t, t.PValue
	}
	for i, p := range stattest.Holm(ps) {
		ts[i].PHolm = p
	}
	return ts, nil
}

// UniformTest is the pending chi-squared test of counts obs over equally
// likely cells (a histogram of probability integral transforms), named
// name, its minimum detectable TV bounding quantity.
func UniformTest(name, quantity string, obs []int64) (Pending, error) {
	tb := &stattest.Table{}
	if err := tb.Add(obs, uniform(len(obs))); err != nil {
		return Pending{}, err
	}
	return Pending{name: name, quantity: quantity, table: tb}, nil
}

// evalTest runs one pending test, its minimum detectable TV at level
// share share with power power.
func evalTest(pt Pending, share, power float64) (Test, error) {
	t := Test{Name: pt.name, Family: FamilyName(pt.family), Quantity: pt.quantity, LevelShare: share}
	if pt.normal != nil {
		return pt.normal.eval(t, share, power), nil
	}
	if pt.het != nil {
		h := pt.het
		t.Stat, t.DF, t.PValue, t.Cells, t.Pooled, t.N = h.Stat, h.DF, h.PValue, h.Cells, h.Pooled, h.N
		t.MinDetTV = h.MinDetectableTV(share, power)
		if h.Impossible > 0 {
			t.Warnings = append(t.Warnings, fmt.Errorf("%d outcomes of probability zero under the rule's law", h.Impossible))
		}
		return t, nil
	}
	res, err := pt.table.Test(stattest.DefaultMinExpected)
	if err != nil {
		return t, err
	}
	t.Stat, t.DF, t.PValue, t.Cells, t.Pooled, t.N = res.Stat, res.DF, res.PValue, res.Cells, res.Pooled, res.N
	switch {
	case res.DF > 0:
		t.MinDetTV = stattest.MinDetectableTV(res.N, res.DF, share, power)
	case pt.oneHot && res.N > 0:
		// Any mass ε off the one possible cell is seen with probability
		// 1-(1-ε)^N (the test then rejects at any level):
		// ε = 1-(1-power)^(1/N).
		t.MinDetTV = -math.Expm1(math.Log1p(-power) / float64(res.N))
	default:
		t.MinDetTV = math.Inf(1)
	}
	t.Warnings = append(t.Warnings, res.Warnings...)
	return t, nil
}

// where lists, for the tests that rejected (ts[i] of all[i], named with
// labels[i] before: a row kind's), the cells that depart most.
func (r *Result) where(level float64, all []Pending, ts []Test, labels []string) {
	for i, pt := range all {
		if ts[i].PHolm >= level || pt.cell == nil {
			continue
		}
		var top []stattest.Residual
		switch {
		case pt.table != nil:
			top = pt.table.TopResiduals(whereTop)
		case pt.hetero != nil:
			top = pt.hetero.TopResiduals(whereTop)
		}
		for _, res := range top {
			r.Where = append(r.Where, Deviation{Test: labels[i] + pt.name, Where: pt.cell(res.Group, res.Cell), Observed: res.Obs, Expected: res.Exp, Z: res.Z})
		}
	}
	slices.SortStableFunc(r.Where, func(a, b Deviation) int { return cmp.Compare(math.Abs(b.Z), math.Abs(a.Z)) })
	r.Where = r.Where[:min(len(r.Where), maxWhere)]
}

// firstRejecting returns the test with the smallest Holm-adjusted p,
// pooled or a row kind's (its name then says which).
func (r *Result) firstRejecting() (string, Test) {
	name, best := "", Test{PHolm: math.Inf(1)}
	for _, t := range r.Tests {
		if t.PHolm < best.PHolm {
			name, best = t.Name, t
		}
	}
	for _, k := range r.RowKinds {
		for _, t := range k.Tests {
			if t.PHolm < best.PHolm {
				name, best = fmt.Sprintf("row kind %q: %s", k.Kind, t.Name), t
			}
		}
	}
	return name, best
}

// nTests is the number of tests of the family: pooled and per row kind.
func (r *Result) nTests() int {
	n := len(r.Tests)
	for _, k := range r.RowKinds {
		n += len(k.Tests)
	}
	return n
}

// claim writes r.Claim, the one sentence that says what the check showed:
// which test rejected, or that none did and how large a deviation the
// finest test would have detected. It never says that the law is
// preserved.
func (r *Result) claim() {
	var why []string
	if r.PValue < r.Level && r.nTests() > 0 {
		name, t := r.firstRejecting()
		why = append(why, RejectWords(name, t, r.Level))
	}
	if ks := r.violatedKinds(); ks != "" {
		why = append(why, "the row kinds that fail: "+ks)
	}
	if r.Invalid > 0 {
		why = append(why, fmt.Sprintf("%d invalid outcomes (out of range, emitting nothing, a token of target probability 0, or not the drafts sent)", r.Invalid))
	}
	if r.Edge == Violated && (r.Mode == "lossless" || r.edgeInVerdict) {
		why = append(why, "a scripted edge case failed: "+r.EdgeMsg)
	}
	if r.EdgeConform == Violated {
		why = append(why, "a scripted edge case failed: "+r.EdgeConformMsg)
	}
	for _, c := range r.Components {
		if c.Verdict == Violated {
			why = append(why, fmt.Sprintf("component %s failed: %s", c.Name, c.Detail))
		}
	}
	var breach []string
	for _, c := range r.Components {
		if c.Verdict == ContractBreach {
			breach = append(breach, fmt.Sprintf("component %s: %s", c.Name, c.Detail))
		}
	}
	what := "the target law"
	if r.Mode != "lossless" {
		what = "the outcome law of " + strings.TrimPrefix(r.Mode, "conform:") + " given the drafts"
	}
	why = append(why, r.Assumptions...)
	switch r.Verdict {
	case Violated:
		r.Claim = "violated: " + strings.Join(why, "; ")
	case ContractBreach:
		r.Claim = fmt.Sprintf("contract breach, not a deviation of the law: no test of %s rejected (%d tests at family-wise level %g), but %s", what, r.nTests(), r.Level, strings.Join(breach, "; "))
	case Inconclusive:
		for _, t := range r.Tests {
			if !(t.MinDetTV < 1) {
				r.Claim = fmt.Sprintf("inconclusive: no test detected a deviation from %s, but %s could not have detected even a total one (%d trials)", what, t.Name, t.N)
				break
			}
		}
		for _, c := range r.Components {
			if c.Verdict == Inconclusive {
				r.Claim = fmt.Sprintf("inconclusive: component %s could not decide: %s", c.Name, c.Detail)
			}
		}
		if r.Claim == "" {
			r.Claim = "inconclusive: no test ran"
		}
	default:
		finest := Test{Name: r.FinestTest, MinDetTV: r.MinDetectableTV, Quantity: r.MinDetectableQuantity}
		r.Claim = BoundWords(what, "", r.nTests(), r.Level, r.Power, r.Level/float64(max(r.nTests(), 1)), finest) +
			"; each test names its own quantity and detectable deviation"
	}
	if r.Edge == NotExercised {
		r.Claim += "; component edge cases not exercised: " + r.EdgeMsg
	}
}
