package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/algos"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/data/samples"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/seq"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// ReplayRule is one rule to replay: a name for reports and the algorithm.
// Greedy marks rules that preserve argmax decoding of the target rather
// than sampling from it (their losslessness check is against argmax p_1).
type ReplayRule struct {
	Name   string
	Algo   sim.Algorithm
	Greedy bool
}

// ReplayConfig configures Replay.
type ReplayConfig struct {
	// Seed keys the rules' random streams: rule r at file row k uses the
	// stream sim.StreamID("data/replay/"+r, k), so any step can be
	// replayed alone and results do not depend on the other rules.
	Seed uint64
	// Reps is the number of sampled outcomes per step and rule (default 1).
	Reps int
	// MaxSteps stops after this many steps (0: the whole log).
	MaxSteps int64
	// Level is the significance level of the losslessness verdict
	// (default 0.001).
	Level float64
	// PerStep, if set, receives every step's result for every rule.
	PerStep func(StepResult) error
	// SkipDivergences skips the per-position KL and TV (α is always
	// computed), which cost a logarithm per vocabulary entry.
	SkipDivergences bool
}

// StepResult is one rule on one step: the exact conditional expectations
// given the logged draft (NaN for rules without a law) next to the mean of
// the sampled outcomes.
type StepResult struct {
	Row, PromptID, Step int64
	Rule                string
	AcceptedExact       float64
	EmittedExact        float64
	AcceptedSampled     float64
	EmittedSampled      float64
}

// RuleReport summarises one rule over a log.
type RuleReport struct {
	Name   string
	Steps  int64
	HasLaw bool
	// Exact conditional expectations given the logged drafts, averaged
	// over steps (NaN without a law), with the normal 95% interval of that
	// mean over steps (the spread comes from the drafts and contexts).
	MeanAcceptedExact, MeanEmittedExact float64
	EmittedExactCI95                    [2]float64
	// Sampled outcomes: means over steps × reps with 95% intervals.
	MeanAcceptedSampled, MeanEmittedSampled float64
	AcceptedCI95, EmittedCI95               [2]float64
	// ExactMinusSampledZ is (sampled - exact)/se of the per-step
	// differences: about N(0, 1) when the rule's Accept agrees with its Law.
	ExactMinusSampledZ float64
	Lossless           check.LosslessCheck
}

// PositionStats are the divergences of draft position i over the log.
type PositionStats struct {
	Position  int     `json:"position"`
	Steps     int64   `json:"steps"`
	MeanAlpha float64 `json:"mean_alpha"` // mean Σ_x min(p_i, q_i)
	MeanTV    float64 `json:"mean_tv"`    // mean TV(p_i, q_i)
	// MeanKL is the mean KL(p_i‖q_i) in nats over the steps where it is
	// finite; KLInfinite counts the others (q_i = 0 where p_i > 0).
	MeanKL     float64 `json:"mean_kl"`
	KLInfinite int64   `json:"kl_infinite_steps"`
}

// ReplayReport is the result of Replay.
type ReplayReport struct {
	Steps     int64
	V         int
	MaxGamma  int
	Positions []PositionStats
	// MeanAlpha is the mean of Σmin(p_i, q_i) over every (step, position).
	MeanAlpha float64
	// Logged summarises the logged run itself: its mean emitted tokens per
	// step (a sample of one per step) and the losslessness check of its
	// first emitted tokens (steps without emitted tokens are skipped).
	LoggedSteps       int64
	LoggedMeanEmitted float64
	LoggedCI95        [2]float64
	LoggedLossless    check.LosslessCheck
	// LoggedPIT tests every emitted token of the logged run (not only the
	// first of each step) against the processed target row after its
	// prefix: per-token PIT tests in three orders and a pair test of
	// successive tokens (seq.Tally), at Level with check.DefaultPower; nil
	// when no step emitted a token.
	LoggedPIT *seq.Verdict
	Rules     []RuleReport
	Warnings  diag.Warnings
}

type ruleAcc struct {
	rule  ReplayRule
	lawer sim.Lawer
	law   sim.Law
	// The rule's rounds: the logged block (given) verified by the rule on
	// the streams of the row (unit).
	w                 *run.Worker
	streams           *run.Streams
	accEx, emEx, diff stattest.Moments
	accS, emS         stattest.Moments
	cells             *check.Binned
}

// Replay runs every rule over the steps of r (from its current position)
// and summarises them: the exact conditional expectations given each
// logged draft (from the rule's sim.Law), sampled outcomes, per-position
// α, TV and KL (sim.Alpha, sim.TV, sim.KL on the processed rows) and the
// binned losslessness test of the first emitted tokens (check.Binned). It
// stops early with ctx.Err() when ctx is cancelled, with the reader's
// error on a bad step, and with an error naming the row and the rule when
// a rule's law fails on a step (an impossible block). When ctx is
// cancelled it stops within 1024 sampled outcomes and returns the report
// of the steps done so far with ctx.Err() (the last step may hold fewer
// sampled outcomes, for fewer rules, than the others).
func Replay(ctx context.Context, r *data.Reader, rules []ReplayRule, cfg ReplayConfig) (*ReplayReport, error) {
	if cfg.Reps <= 0 {
		cfg.Reps = 1
	}
	if cfg.Level <= 0 {
		cfg.Level = 0.001
	}
	rr, err := newReplayRun(r, rules, cfg)
	if err != nil {
		return nil, err
	}
	for !rr.interrupted && r.Next() {
		if ctx.Err() != nil {
			rr.interrupted = true
			break
		}
		if cfg.MaxSteps > 0 && rr.rep.Steps >= cfg.MaxSteps {
			break
		}
		if err := rr.step(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	rep := rr.assemble()
	if rr.interrupted {
		return rep, ctx.Err()
	}
	return rep, nil
}

// replayRun is Replay's state between steps: the rules' accumulators, the
// logged run's and the positions' summaries, and the step's rows.
type replayRun struct {
	r     *data.Reader
	cfg   ReplayConfig
	given *run.Given
	accs  []*ruleAcc
	rep   *ReplayReport
	// logged, loggedCells, loggedPIT: the logged run's emitted tokens per
	// step, its first tokens' binned test and its every token's PIT test.
	logged      stattest.Moments
	loggedCells *check.Binned
	loggedPIT   *seq.Tally
	pitStreams  *run.Streams
	alphaAll    stattest.Moments
	pos         []posAcc
	probs       []float64
	// p64[i], q64[i]: the step's processed rows as float64, converted once
	// for the divergences and the logged run's PIT test.
	p64, q64    [][]float64
	interrupted bool
}

// newReplayRun builds Replay's state. Every rule replays the logged block
// itself; its sampled outcomes at file row k come one after another from
// the coins stream of unit k of run.Named("replay"), the same for every
// rule (common random numbers).
//
// The logged run's every emitted token is tested by its randomised PIT
// under the correctly processed target row after its prefix (seq's
// sequence tests); the randomisation of row k comes from unit k of
// run.Named("replay-pit"), so it is the same whichever rules replay. The
// pair test pairs successive tokens in the file's order, across steps and
// prompts: given everything before it in that order, each token has its
// row's law (prompts are independent of one another), whereas pairing
// within a step or a prompt would keep a pair only when the step went on,
// which depends on the first token (a correction ends the step).
func newReplayRun(r *data.Reader, rules []ReplayRule, cfg ReplayConfig) (*replayRun, error) {
	rr := &replayRun{r: r, cfg: cfg, given: &run.Given{}, accs: make([]*ruleAcc, len(rules)),
		rep: &ReplayReport{}, loggedCells: check.NewRatioBinned(),
		pitStreams: run.NewStreams(cfg.Seed, run.Named("replay-pit")),
		probs:      make([]float64, len(check.RatioEdges)+2)}
	for i, ru := range rules {
		a := &ruleAcc{rule: ru}
		l := &run.Loop{Seed: cfg.Seed, Keys: run.Named("replay"), Chains: rr.given,
			Verifiers: []run.Verifier{run.Chain(ru.Algo)}}
		w, err := l.NewWorker()
		if err != nil {
			return nil, fmt.Errorf("replay: rule %s: %w", ru.Name, err)
		}
		a.w, a.streams = w, run.NewStreams(l.Seed, l.Keys)
		a.lawer, _ = ru.Algo.(sim.Lawer)
		if ru.Greedy {
			a.cells = check.NewGreedyBinned()
		} else {
			a.cells = check.NewRatioBinned()
		}
		rr.accs[i] = a
	}
	return rr, nil
}

// step replays the reader's current step: the positions' divergences, the
// logged run's tests and every rule's outcomes.
func (rr *replayRun) step(ctx context.Context) error {
	r, rep := rr.r, rr.rep
	st, b := r.Step(), r.Block()
	rr.given.B = b
	row := r.Row()
	g := len(st.Tokens)
	rep.Steps++
	rep.V = len(st.P[0])
	rep.MaxGamma = max(rep.MaxGamma, g)
	rr.rows(g)
	p1, q1 := sim.F32(r.ProcP(0)), sim.F32(r.ProcQ(0)[:len(r.ProcP(0))])
	check.RatioCells(rr.probs, p1, q1)
	if len(st.Emitted) > 0 {
		rr.addLogged(st, row, g, p1, q1)
	}
	am := -1
	for _, a := range rr.accs {
		if err := rr.ruleStep(ctx, a, row, p1, q1, &am); err != nil {
			return err
		}
		if rr.interrupted {
			break
		}
	}
	return nil
}

// rows converts the step's g+1 processed rows to float64 and adds the g
// draft positions' α (and divergences) to their summaries.
func (rr *replayRun) rows(g int) {
	for len(rr.pos) < g {
		rr.pos = append(rr.pos, posAcc{})
	}
	for len(rr.p64) <= g {
		rr.p64, rr.q64 = append(rr.p64, nil), append(rr.q64, nil)
	}
	for i := 0; i <= g; i++ {
		rr.p64[i] = sim.Float64s(rr.p64[i], rr.r.ProcP(i))
		if i < g {
			rr.q64[i] = sim.Float64s(rr.q64[i], rr.r.ProcQ(i)[:len(rr.p64[i])])
		}
	}
	for i := 0; i < g; i++ {
		rr.alphaAll.Add(rr.pos[i].add(rr.p64[i], rr.q64[i], !rr.cfg.SkipDivergences))
	}
}

// addLogged adds a step's emitted tokens to the logged run's summaries:
// their count, the first token's cell and every token's PIT.
func (rr *replayRun) addLogged(st *data.Step, row int64, g int, p1, q1 sim.Row) {
	rr.logged.Add(float64(len(st.Emitted)))
	rr.loggedCells.Add(rr.probs, check.RatioCell(p1, q1, st.Emitted[0]))
	if rr.loggedPIT == nil {
		rr.loggedPIT = seq.NewTally(rr.rep.V, false)
	}
	rr.pitStreams.Reset(uint64(row))
	rng := rr.pitStreams.Rand(run.Coins)
	for j, x := range st.Emitted {
		q := rr.p64[j] // the bonus position has no draft row
		if j < g {
			q = rr.q64[j]
		}
		rr.loggedPIT.Add(rng.Float64(), rr.p64[j], q, x)
	}
}

// ruleStep replays one rule on the step: its exact law given the logged
// block, cfg.Reps sampled outcomes and the first one's cell. am caches
// the target's argmax for greedy rules (-1 until needed).
func (rr *replayRun) ruleStep(ctx context.Context, a *ruleAcc, row int64, p1, q1 sim.Row, am *int) error {
	st, b := rr.r.Step(), rr.r.Block()
	res := StepResult{Row: row, PromptID: st.PromptID, Step: st.Step, Rule: a.rule.Name,
		AcceptedExact: math.NaN(), EmittedExact: math.NaN()}
	if a.lawer != nil {
		if err := a.lawer.Law(b, &a.law); err != nil {
			return fmt.Errorf("replay: rule %s on row %d: %w", a.rule.Name, row, err)
		}
		res.AcceptedExact, res.EmittedExact = a.law.ExpectedAccepted(), a.law.ExpectedEmitted()
		a.accEx.Add(res.AcceptedExact)
		a.emEx.Add(res.EmittedExact)
	}
	first, err := rr.sample(ctx, a, row, &res)
	if err != nil || rr.interrupted {
		return err
	}
	if a.lawer != nil {
		a.diff.Add(res.EmittedSampled - res.EmittedExact)
	}
	if a.rule.Greedy {
		if *am < 0 {
			*am = sim.ArgmaxRow(b.P[0])
		}
		c := 1
		if first == *am {
			c = 0
		}
		a.cells.Add(check.GreedyProbs, c)
	} else if first >= 0 {
		a.cells.Add(rr.probs, check.RatioCell(p1, q1, first))
	}
	if rr.cfg.PerStep != nil {
		return rr.cfg.PerStep(res)
	}
	return nil
}

// sample draws the rule's cfg.Reps outcomes on the step, sets res's
// sampled means and returns the first outcome's first emitted token (-1
// when it emitted none). It checks ctx every 1024 outcomes and sets
// rr.interrupted when it is cancelled (the step keeps the reps done).
func (rr *replayRun) sample(ctx context.Context, a *ruleAcc, row int64, res *StepResult) (int, error) {
	st, b := rr.r.Step(), rr.r.Block()
	a.streams.Reset(uint64(row))
	sa, se := 0.0, 0.0
	first := -1
	for k := 0; k < rr.cfg.Reps; k++ {
		if k%1024 == 1023 && ctx.Err() != nil {
			rr.interrupted = true
			break
		}
		rd, err := a.w.Round(a.streams, int64(k))
		if err != nil {
			return 0, fmt.Errorf("replay: rule %s on row %d: %w", a.rule.Name, row, err)
		}
		o := rd.Outcome()
		if err := sim.CheckOutcome(b, o); err != nil {
			return 0, fmt.Errorf("replay: rule %s on row %d: %v", a.rule.Name, row, err)
		}
		sa += float64(o.Accepted)
		se += float64(o.Emitted())
		a.accS.Add(float64(o.Accepted))
		a.emS.Add(float64(o.Emitted()))
		if k == 0 {
			first = o.Next
			if o.Accepted > 0 {
				first = st.Tokens[0]
			}
		}
	}
	res.AcceptedSampled, res.EmittedSampled = sa/float64(rr.cfg.Reps), se/float64(rr.cfg.Reps)
	return first, nil
}

// assemble summarises the steps replayed: the positions, the logged run's
// tests and every rule's report.
func (rr *replayRun) assemble() *ReplayReport {
	rep, cfg := rr.rep, rr.cfg
	rep.Positions = positionStats(rr.pos, cfg.SkipDivergences)
	rep.MeanAlpha = rr.alphaAll.Summary(0.95).Mean
	ls := rr.logged.Summary(0.95)
	rep.LoggedSteps, rep.LoggedMeanEmitted, rep.LoggedCI95 = ls.N, ls.Mean, [2]float64{ls.Lo, ls.Hi}
	rep.LoggedLossless = rr.loggedCells.Test(cfg.Level)
	if rr.loggedPIT != nil {
		vd := rr.loggedPIT.Verdict(cfg.Level, check.DefaultPower)
		rep.LoggedPIT = &vd
	}
	for _, a := range rr.accs {
		rep.Rules = append(rep.Rules, a.report(rep.Steps, cfg.Level))
	}
	rep.Warnings = rr.r.Warnings()
	return rep
}

// report is the rule's summary over steps replayed steps at level.
func (a *ruleAcc) report(steps int64, level float64) RuleReport {
	rr := RuleReport{Name: a.rule.Name, Steps: steps, HasLaw: a.lawer != nil,
		MeanAcceptedExact: math.NaN(), MeanEmittedExact: math.NaN(), ExactMinusSampledZ: math.NaN()}
	if a.lawer != nil {
		ea, ee := a.accEx.Summary(0.95), a.emEx.Summary(0.95)
		rr.MeanAcceptedExact, rr.MeanEmittedExact, rr.EmittedExactCI95 = ea.Mean, ee.Mean, [2]float64{ee.Lo, ee.Hi}
		if d := a.diff.Summary(0.95); d.N > 1 && d.StdDev > 0 {
			rr.ExactMinusSampledZ = d.Mean / (d.StdDev / math.Sqrt(float64(d.N)))
		}
	}
	sa, se := a.accS.Summary(0.95), a.emS.Summary(0.95)
	rr.MeanAcceptedSampled, rr.AcceptedCI95 = sa.Mean, [2]float64{sa.Lo, sa.Hi}
	rr.MeanEmittedSampled, rr.EmittedCI95 = se.Mean, [2]float64{se.Lo, se.Hi}
	rr.Lossless = a.cells.Test(level)
	return rr
}

// ErrBadInput marks errors in the options of ReplayLog (an unknown rule or
// bug, reps or level out of range): the caller's input, not the log. It
// is a usage error (diag.ErrUsage).
var ErrBadInput = diag.New(diag.ErrUsage, "bad input")

// ErrViolated is returned by ReplayLog, with its complete output, when
// FailOnViolation is set and a rule that is neither a mutant nor lossy
// fails the losslessness check. Its kind is diag.ErrViolated.
var ErrViolated = diag.New(diag.ErrViolated, "losslessness check failed")

// ReplayOptions are the inputs of ReplayLog ('simulate replay').
type ReplayOptions struct {
	// Log is the parquet log; Bug plants a p/q processing bug ("none",
	// "p-raw", "q-raw", "q-bf16").
	Log, Bug string
	// Algos are the rules to replay (registry names, default parameters).
	Algos []string
	// Seed, Reps, MaxSteps, Level and NoDivergences are ReplayConfig's
	// Seed, Reps, MaxSteps, Level and SkipDivergences.
	Seed          uint64
	Reps          int
	MaxSteps      int64
	Level         float64
	NoDivergences bool
	// StepsOut, if set, is a CSV file receiving every step's exact and
	// sampled values (written to a temporary file and renamed).
	StepsOut string
	// FailOnViolation makes a failed losslessness check of a rule that is
	// neither a mutant nor lossy an error (ErrViolated).
	FailOnViolation bool
	// MemBudget is the most bytes one step's rows may take in the reader
	// (0: sim.DefaultMemBudget).
	MemBudget int64
	// AlgosDefault says that Algos is the command's default, not the
	// user's choice: a tree log, which replays no rule, ignores it (and
	// refuses rules that were asked for).
	AlgosDefault bool
}

// ReplayRuleJSON is one rule in the JSON form of 'simulate replay'.
type ReplayRuleJSON struct {
	Algorithm           string               `json:"algorithm"`
	Mutant              bool                 `json:"mutant"`
	Lossy               bool                 `json:"lossy"`
	Greedy              bool                 `json:"greedy"`
	Steps               int64                `json:"steps"`
	HasLaw              bool                 `json:"has_law"`
	MeanAcceptedExact   *float64             `json:"mean_accepted_exact"`
	MeanEmittedExact    *float64             `json:"mean_emitted_exact"`
	EmittedExactCI95    []*float64           `json:"emitted_exact_ci95"`
	MeanAlpha           float64              `json:"mean_alpha"`
	MeanAcceptedSampled *float64             `json:"mean_accepted_sampled"`
	AcceptedCI95        []*float64           `json:"accepted_ci95"`
	MeanEmittedSampled  *float64             `json:"mean_emitted_sampled"`
	CI95                []*float64           `json:"ci95"`
	ExactVsSampledZ     *float64             `json:"exact_vs_sampled_z"`
	Lossless            *check.LosslessCheck `json:"lossless"`
}

// ReplayOutput is the JSON form of 'simulate replay'. Field names are
// stable.
type ReplayOutput struct {
	Log        string            `json:"log"`
	Bug        string            `json:"bug"`
	Seed       uint64            `json:"seed"`
	Reps       int               `json:"reps"`
	Steps      int64             `json:"steps"`
	V          int               `json:"V"`
	MaxGamma   int               `json:"max_gamma"`
	Provenance map[string]string `json:"provenance"`
	MeanAlpha  *float64          `json:"mean_alpha"`
	Positions  []PositionStats   `json:"positions"`
	Logged     ReplayLoggedJSON  `json:"logged"`
	Rules      []ReplayRuleJSON  `json:"rules"`
	Warnings   diag.Warnings     `json:"warnings"`
	ElapsedS   float64           `json:"elapsed_s"`
	// Shape is "chain" for a chain log (schema version 1) and "tree" for a
	// tree log (version 2), whose logged run alone is judged.
	Shape       string  `json:"shape"`
	StepsPerSec float64 `json:"steps_per_s"`
	MBPerSec    float64 `json:"mb_per_s"`
	// Violated names the rules (neither mutants nor lossy) whose
	// losslessness check failed.
	Violated []string `json:"-"`
	// noDivergences: TV and KL were not computed (their JSON fields hold
	// 0); the text says so instead of printing zeros.
	noDivergences bool
}

// ReplayLoggedJSON summarises the logged run itself in ReplayOutput.
type ReplayLoggedJSON struct {
	Steps       int64                `json:"steps"`
	MeanEmitted *float64             `json:"mean_emitted"`
	CI95        []*float64           `json:"ci95"`
	Lossless    *check.LosslessCheck `json:"lossless"`
	// PIT is the test of every emitted token (null when none was emitted).
	PIT *seq.Verdict `json:"pit"`
}

// numOrNull maps NaN and ±Inf to nil (JSON null).
func numOrNull(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func ciOrNull(c [2]float64) []*float64 { return []*float64{numOrNull(c[0]), numOrNull(c[1])} }

// ReplayLog replays opt.Algos over the log at opt.Log ('simulate replay'):
// it validates the options (errors wrap ErrBadInput), opens the log
// (errors from data.Open), runs Replay and builds the output. When
// opt.FailOnViolation is set and a rule that is neither a mutant nor lossy
// fails the losslessness check, it returns the output together with an
// error wrapping ErrViolated.
func ReplayLog(ctx context.Context, opt ReplayOptions) (*ReplayOutput, error) {
	bug, rules, entries, err := opt.parse()
	if err != nil {
		return nil, err
	}
	if opt.StepsOut != "" {
		if err := results.CheckOutput(opt.StepsOut, opt.Log); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadInput, diag.Param("steps-out", ": %w", err))
		}
	}
	version, err := data.LogVersion(opt.Log)
	if err != nil {
		return nil, err
	}
	if version == data.TreeSchemaVersion {
		return replayTreeLog(ctx, opt)
	}
	r, err := data.Open(opt.Log, data.ReadOptions{Bug: bug, MemBudget: opt.MemBudget})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cfg := ReplayConfig{Seed: opt.Seed, Reps: opt.Reps, MaxSteps: opt.MaxSteps, Level: opt.Level, SkipDivergences: opt.NoDivergences}
	var stepsOut *stepsCSV
	if opt.StepsOut != "" {
		if stepsOut, err = newStepsCSV(opt.StepsOut); err != nil {
			return nil, err
		}
		defer stepsOut.abort()
		cfg.PerStep = stepsOut.write
	}
	start := time.Now()
	rep, err := Replay(ctx, r, rules, cfg)
	if err != nil && (ctx.Err() == nil || rep == nil) {
		return nil, err
	}
	interrupted := err != nil // the report holds the steps done so far
	if stepsOut != nil {
		if err := stepsOut.close(); err != nil {
			return nil, err
		}
	}
	out := opt.output(rep, r.Meta(), cfg.Reps, time.Since(start).Seconds())
	out.Shape = "chain"
	for i, rr := range rep.Rules {
		e := entries[i]
		lc := rr.Lossless
		out.Rules = append(out.Rules, ReplayRuleJSON{Algorithm: rr.Name, Mutant: e.Mutant, Lossy: e.Lossy, Greedy: e.Greedy,
			Steps: rr.Steps, HasLaw: rr.HasLaw, MeanAcceptedExact: numOrNull(rr.MeanAcceptedExact), MeanEmittedExact: numOrNull(rr.MeanEmittedExact),
			EmittedExactCI95: ciOrNull(rr.EmittedExactCI95), MeanAlpha: rep.MeanAlpha, MeanAcceptedSampled: numOrNull(rr.MeanAcceptedSampled),
			AcceptedCI95: ciOrNull(rr.AcceptedCI95), MeanEmittedSampled: numOrNull(rr.MeanEmittedSampled), CI95: ciOrNull(rr.EmittedCI95),
			ExactVsSampledZ: numOrNull(rr.ExactMinusSampledZ), Lossless: &lc})
		if lc.Verdict == "violated" && !e.Mutant && !e.Lossy {
			out.Violated = append(out.Violated, rr.Name)
		}
	}
	if interrupted {
		return out, diag.Interrupted(fmt.Errorf("replay interrupted after %d steps; the report covers those", rep.Steps))
	}
	if opt.FailOnViolation && len(out.Violated) > 0 {
		return out, fmt.Errorf("%w for %s", ErrViolated, strings.Join(out.Violated, ", "))
	}
	return out, nil
}

// output builds the parts of ReplayOutput common to chain and tree logs
// (everything but the rules and the shape) from a report of reps sampled
// outcomes per step that took el seconds over a log described by m.
func (opt ReplayOptions) output(rep *ReplayReport, m data.Meta, reps int, el float64) *ReplayOutput {
	out := &ReplayOutput{Log: opt.Log, Bug: opt.Bug, Seed: opt.Seed, Reps: reps, Steps: rep.Steps, V: rep.V,
		MaxGamma: rep.MaxGamma, Provenance: m.Provenance.Map(), MeanAlpha: numOrNull(rep.MeanAlpha), Positions: rep.Positions,
		Warnings: rep.Warnings, ElapsedS: el, Rules: []ReplayRuleJSON{}, noDivergences: opt.NoDivergences}
	for i := range out.Positions {
		p := &out.Positions[i]
		if math.IsNaN(p.MeanKL) {
			p.MeanKL = 0
		}
		if math.IsNaN(p.MeanTV) {
			p.MeanTV = 0
		}
	}
	if el > 0 {
		out.StepsPerSec = float64(rep.Steps) / el
		if m.Rows > 0 {
			out.MBPerSec = float64(m.Size) * float64(rep.Steps) / float64(m.Rows) / el / 1e6
		}
	}
	lg := rep.LoggedLossless
	out.Logged = ReplayLoggedJSON{Steps: rep.LoggedSteps, MeanEmitted: numOrNull(rep.LoggedMeanEmitted), CI95: ciOrNull(rep.LoggedCI95), Lossless: &lg, PIT: rep.LoggedPIT}
	return out
}

// Validate checks the options as ReplayLog does, without reading the log;
// errors wrap ErrBadInput.
func (opt ReplayOptions) Validate() error {
	_, _, _, err := opt.parse()
	return err
}

func (opt ReplayOptions) parse() (data.Bug, []ReplayRule, []algos.Entry, error) {
	bug, err := data.ParseBug(opt.Bug)
	if err != nil {
		return bug, nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	if opt.Reps < 1 {
		return bug, nil, nil, fmt.Errorf("%w: %w", ErrBadInput, diag.Param("reps", " = %d; use at least 1", opt.Reps))
	}
	if l := opt.Level; !(l > 0 && l < 1) {
		return bug, nil, nil, fmt.Errorf("%w: %w", ErrBadInput, diag.Param("level", " = %g; use a value in (0, 1)", l))
	}
	rules, entries, err := replayRules(opt.Algos)
	return bug, rules, entries, err
}

// replayRules builds the named rules with default parameters; errors wrap
// ErrBadInput.
func replayRules(names []string) ([]ReplayRule, []algos.Entry, error) {
	var rules []ReplayRule
	var entries []algos.Entry
	for _, name := range names {
		name = strings.TrimSpace(name)
		e, err := algos.Lookup(name)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		a, err := e.Build(nil)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		rules = append(rules, ReplayRule{Name: name, Algo: a, Greedy: e.Greedy})
		entries = append(entries, e)
	}
	return rules, entries, nil
}

// stepsCSV writes ReplayLog's per-step CSV to a temporary file that close
// renames into place (abort removes it): internal/fsutil's atomic File.
type stepsCSV struct {
	f *fsutil.File
	w *csv.Writer
}

func newStepsCSV(path string) (*stepsCSV, error) {
	f, err := fsutil.Create(path)
	if err != nil {
		return nil, err
	}
	s := &stepsCSV{f: f, w: csv.NewWriter(f)}
	if err := s.w.Write([]string{"row", "prompt_id", "step", "algorithm", "accepted_exact", "emitted_exact", "accepted_sampled", "emitted_sampled"}); err != nil {
		s.abort()
		return nil, err
	}
	return s, nil
}

func (s *stepsCSV) write(r StepResult) error {
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	return s.w.Write([]string{strconv.FormatInt(r.Row, 10), strconv.FormatInt(r.PromptID, 10), strconv.FormatInt(r.Step, 10),
		table.CSVText(r.Rule), ff(r.AcceptedExact), ff(r.EmittedExact), ff(r.AcceptedSampled), ff(r.EmittedSampled)})
}

func (s *stepsCSV) close() error {
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		s.f.Abort()
		return err
	}
	return s.f.Commit()
}

func (s *stepsCSV) abort() { s.f.Abort() }

// firstTokenText is the first-token check in a few words: its verdict,
// p-value and level, and the deviation it would have detected.
func firstTokenText(lc *check.LosslessCheck) string {
	s := fmt.Sprintf("first token %s (p = %.3g, level %g", lc.Verdict, lc.PValue, lc.Level)
	if lc.MinDetectableTV != nil {
		s += fmt.Sprintf("; detects %.3g at power %g", *lc.MinDetectableTV, lc.Power)
	}
	return s + ")"
}

// klText is a position's mean KL(p‖q) with the subset it averages: the
// steps where it is finite, counted, and the others, where it is +Inf.
func klText(p PositionStats) string { return klTextOf(p, "steps") }

// klTextOf is klText counting unit (steps of a chain log, nodes of a
// tree log).
func klTextOf(p PositionStats, unit string) string {
	fin := p.Steps - p.KLInfinite
	switch {
	case math.IsNaN(p.MeanKL) && p.KLInfinite == 0 && fin > 0:
		return "KL n/a (not computed)"
	case fin <= 0:
		return fmt.Sprintf("KL +Inf at all %d %s", p.Steps, unit)
	case p.KLInfinite == 0:
		return fmt.Sprintf("KL %s (all %d %s)", table.Fixed(p.MeanKL, true, 4), p.Steps, unit)
	}
	return fmt.Sprintf("KL %s over the %d of %d %s (%.0f%%) where it is finite; +Inf at the other %d",
		table.Fixed(p.MeanKL, true, 4), fin, p.Steps, unit, 100*float64(fin)/float64(p.Steps), p.KLInfinite)
}

// WriteText prints the human-readable form of 'simulate replay' to w and
// its warnings to errw.
func (out *ReplayOutput) WriteText(w, errw io.Writer) {
	f := func(p *float64) string {
		if p == nil {
			return NA
		}
		return table.Fixed(*p, true, 4)
	}
	fmt.Fprintf(w, "log %s: %d steps, V = %d, gamma <= %d, seed %d, bug %s (%.1f steps/s, %.1f MB/s)\n",
		out.Log, out.Steps, out.V, out.MaxGamma, out.Seed, out.Bug, out.StepsPerSec, out.MBPerSec)
	unit := "steps"
	if out.Shape == "tree" {
		unit = "nodes"
		fmt.Fprintf(w, "tree log: its logged run is judged, no rule is replayed; position d averages the nodes at depth d-1 that have a draft row\n")
	}
	for _, p := range out.Positions {
		if out.noDivergences {
			fmt.Fprintf(w, "  position %d: alpha %s  (TV and KL not computed; %d %s)\n", p.Position, table.Fixed(p.MeanAlpha, true, 4), p.Steps, unit)
			continue
		}
		fmt.Fprintf(w, "  position %d: alpha %s  TV %s  %s\n", p.Position, table.Fixed(p.MeanAlpha, true, 4), table.Fixed(p.MeanTV, true, 4), klTextOf(p, unit))
	}
	fmt.Fprintf(w, "logged run: %d steps, mean emitted %s [%s, %s], %s\n", out.Logged.Steps, f(out.Logged.MeanEmitted),
		f(out.Logged.CI95[0]), f(out.Logged.CI95[1]), firstTokenText(out.Logged.Lossless))
	if v := out.Logged.PIT; v != nil {
		fmt.Fprintf(w, "logged run, every emitted token: %s\n", v.Claim)
	}
	for _, r := range out.Rules {
		fmt.Fprintf(w, "%-24s exact: accepted %s emitted %s | sampled: accepted %s emitted %s [%s, %s] | %s\n",
			r.Algorithm, f(r.MeanAcceptedExact), f(r.MeanEmittedExact), f(r.MeanAcceptedSampled), f(r.MeanEmittedSampled),
			f(r.CI95[0]), f(r.CI95[1]), firstTokenText(r.Lossless))
	}
	out.Warnings.Print(errw, "simulate")
}

// ReplayName is the registered name of the replay of the embedded sample
// log (data/samples, chargram.parquet).
const ReplayName = "replay"

// ReplaySampleRules are the rules replayed over the sample log (default
// parameters).
var ReplaySampleRules = []string{"token", "token-nobonus", "block", "exact-match", "greedy", "lenience", "mentored"}

func init() {
	Register(Experiment{Name: ReplayName, Main: 74, NumbersAt: 79, Section: "Replay of the embedded sample log",
		Summary: "replay of the bundled sample log: per-step α of the logged rows, and per rule the exact and sampled emitted tokens and the binned losslessness test",
		Cells: func(Config) ([]Cell, error) {
			return []Cell{{Key: []KV{{K: "log", V: samples.CharGramName}}}}, nil
		},
		// The replay's streams are keyed by the master seed itself (not
		// the cell seed), as the report has always stored them.
		Run: func(ctx context.Context, cfg Config, _ Cell, _ uint64) ([]Row, error) {
			return ReplaySampleRows(ctx, cfg.Seed, 0)
		},
		// The main job stores the rows without the cell's log column.
		Whole: func(ctx context.Context, cfg Config) ([]Row, error) {
			return ReplaySampleRows(ctx, cfg.Seed, 0)
		},
		Figures: []Figure{{Name: ReplayName, Make: plots.Replay}},
		Tables:  []Table{{Name: ReplayName, Make: replayTable}},
		Numbers: []table.Number{
			{Macro: "ReplaySteps", Where: replayRule("token"), Col: "steps", Doc: "steps of the sample log"},
			{Macro: "ReplayAlpha", Where: replayRule("token"), Col: "mean_alpha", Digits: 3, Doc: "mean α over the sample log"},
			{Macro: "ReplayToken", Where: replayRule("token"), Col: "mean_emitted_exact", Digits: 3, Doc: "token E[emitted] on the sample log"},
			{Macro: "ReplayBlock", Where: replayRule("block"), Col: "mean_emitted_exact", Digits: 3, Doc: "block E[emitted] on the sample log"},
			{Macro: "ReplayLogged", Where: replayRule("logged"), Col: "mean_emitted_sampled", Digits: 3, Doc: "the logged run's mean emitted"},
		}})
}

// replayRule is the replay's summary row of one rule ("logged": the run
// as logged).
func replayRule(algorithm string) []string {
	return []string{"kind", "rule", "algorithm", algorithm}
}

// replayTable is the replay's per-rule summary.
func replayTable(rows []Row) table.Text {
	t := table.Text{Caption: "Replay of the embedded sample log (data/samples/chargram.parquet): emitted tokens per step by rule, exact given each logged draft and sampled (95% CIs), and the χ² losslessness check of the first emitted token (lossy rules are expected to fail it).",
		Header: []string{"rule", "steps", "E[emitted] exact", "95% CI", "sampled", "95% CI", "first token", "p-value"}, Right: table.RightCols(8, 1, 2, 4, 7)}
	for _, r := range rows {
		if r.String("kind") != "rule" {
			continue
		}
		t.Rows = append(t.Rows, []string{r.String("algorithm"), dec(r, "steps", 0), dec(r, "mean_emitted_exact", 3),
			bracket(r, "ci_lo", "ci_hi", 3), dec(r, "mean_emitted_sampled", 3), bracket(r, "sampled_ci_lo", "sampled_ci_hi", 3),
			r.String("lossless_verdict"), dec(r, "lossless_p", 3)})
	}
	return t
}

// ReplaySampleRows replays ReplaySampleRules over the embedded sample log
// with Replay and returns two kinds of rows: kind = "alpha", one per
// (step, draft position) with α = Σ_x min(p_i(x), q_i(x)) of the logged
// rows; kind = "rule", one per rule (and "logged", the run as logged) with
// the mean emitted tokens per step (exact given each logged draft, and
// sampled) and the losslessness check of the first emitted token.
// maxSteps > 0 stops after that many steps.
func ReplaySampleRows(ctx context.Context, seed uint64, maxSteps int64) ([]Row, error) {
	open := func() (*data.Reader, error) {
		return data.NewReader(bytes.NewReader(samples.CharGram), int64(len(samples.CharGram)), data.ReadOptions{})
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	var rows []Row
	var n int64
	for r.Next() && (maxSteps <= 0 || n < maxSteps) {
		n++
		b := r.Block()
		for i := range b.Tokens {
			a := 0.0
			for x := range b.P[i].Len() {
				a += math.Min(b.P[i].At(x), b.Q[i].At(x))
			}
			rows = append(rows, Row{{K: "experiment", V: ReplayName}, {K: "kind", V: "alpha"},
				{K: "row", V: r.Row()}, {K: "position", V: int64(i + 1)}, {K: "alpha", V: a}})
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	r.Close()
	rules, _, err := replayRules(ReplaySampleRules)
	if err != nil {
		return nil, err
	}
	if r, err = open(); err != nil {
		return nil, err
	}
	defer r.Close()
	rep, err := Replay(ctx, r, rules, ReplayConfig{Seed: seed, MaxSteps: maxSteps})
	if err != nil {
		return nil, err
	}
	rows = append(rows, Row{{K: "experiment", V: ReplayName}, {K: "kind", V: "rule"},
		{K: "algorithm", V: "logged"}, {K: "steps", V: rep.LoggedSteps},
		{K: "mean_emitted_exact", V: math.NaN()}, {K: "ci_lo", V: math.NaN()}, {K: "ci_hi", V: math.NaN()},
		{K: "mean_emitted_sampled", V: rep.LoggedMeanEmitted}, {K: "sampled_ci_lo", V: rep.LoggedCI95[0]}, {K: "sampled_ci_hi", V: rep.LoggedCI95[1]},
		{K: "lossless_verdict", V: rep.LoggedLossless.Verdict}, {K: "lossless_p", V: rep.LoggedLossless.PValue},
		{K: "mean_alpha", V: rep.MeanAlpha}})
	for _, rr := range rep.Rules {
		rows = append(rows, Row{{K: "experiment", V: ReplayName}, {K: "kind", V: "rule"},
			{K: "algorithm", V: rr.Name}, {K: "steps", V: rr.Steps},
			{K: "mean_emitted_exact", V: rr.MeanEmittedExact}, {K: "ci_lo", V: rr.EmittedExactCI95[0]}, {K: "ci_hi", V: rr.EmittedExactCI95[1]},
			{K: "mean_emitted_sampled", V: rr.MeanEmittedSampled}, {K: "sampled_ci_lo", V: rr.EmittedCI95[0]}, {K: "sampled_ci_hi", V: rr.EmittedCI95[1]},
			{K: "lossless_verdict", V: rr.Lossless.Verdict}, {K: "lossless_p", V: rr.Lossless.PValue},
			{K: "mean_alpha", V: rep.MeanAlpha}})
	}
	return rows, nil
}
