package data

import (
	"context"
	"fmt"
	"math"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
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

// LosslessCheck is a Pearson chi-squared test of the first emitted token
// of each step against the target row p_1 of that step. Tokens are
// binned by their ratio cell: r(t) = q_1(t)/p_1(t) falls in one of
// RatioEdges' intervals, or in the cell "p_1(t) = 0"; under a lossless
// rule, the first emitted token of step s is in cell c with probability
// Σ_{t∈c} p_1^s(t), so the observed counts are a sum of independent
// categorical draws with known probabilities. The test compares them with
// the mean cell probabilities; with probabilities that vary from step to
// step the counts are less dispersed than a multinomial's, so the test is
// conservative (its false-alarm rate is at most Level). A bug that moves
// mass between tokens where the draft over- and under-weights the target
// (p/q processing mismatches, residual errors) shows up here.
//
// For greedy rules the cells are "argmax p_1" and "any other token", with
// probabilities 1 and 0.
type LosslessCheck struct {
	Cells    []string  `json:"cells"`
	Observed []int64   `json:"observed"`
	Expected []float64 `json:"expected"`
	Stat     float64   `json:"chi2"`
	DF       int       `json:"df"`
	PValue   float64   `json:"p_value"`
	// Verdict is "consistent" (p ≥ Level), "violated" (p < Level) or
	// "no data".
	Verdict string `json:"verdict"`
}

// RatioEdges are the upper edges of the ratio cells of LosslessCheck
// (the last cell is (4, +Inf)).
var RatioEdges = []float64{0.25, 0.5, 0.8, 1, 1.25, 2, 4}

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
	Lossless           LosslessCheck
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
	LoggedLossless    LosslessCheck
	Rules             []RuleReport
	Warnings          []string
}

type ruleAcc struct {
	rule              ReplayRule
	lawer             sim.Lawer
	law               sim.Law
	stream            *sim.Stream
	streamName        string
	accEx, emEx, diff stattest.Moments
	accS, emS         stattest.Moments
	cells             cellCounter
}

type cellCounter struct {
	obs []int64
	exp []float64
}

func (c *cellCounter) init(n int) {
	c.obs, c.exp = make([]int64, n), make([]float64, n)
}

// Replay runs every rule over the steps of r (from its current position)
// and summarises them. It stops early with ctx.Err() when ctx is
// cancelled, and with the reader's error on a bad step. Rules' Law
// methods that panic (an impossible block) are reported as errors naming
// the row.
func Replay(ctx context.Context, r *Reader, rules []ReplayRule, cfg ReplayConfig) (rep *ReplayReport, err error) {
	if cfg.Reps <= 0 {
		cfg.Reps = 1
	}
	if cfg.Level <= 0 {
		cfg.Level = 0.001
	}
	accs := make([]*ruleAcc, len(rules))
	for i, ru := range rules {
		a := &ruleAcc{rule: ru, stream: sim.NewStream(), streamName: "data/replay/" + ru.Name}
		a.lawer, _ = ru.Algo.(sim.Lawer)
		if ru.Greedy {
			a.cells.init(2)
		} else {
			a.cells.init(len(RatioEdges) + 2)
		}
		accs[i] = a
	}
	rep = &ReplayReport{}
	var logged stattest.Moments
	var loggedCells cellCounter
	loggedCells.init(len(RatioEdges) + 2)
	var alphaAll stattest.Moments
	type posAcc struct {
		n, inf        int64
		alpha, tv, kl float64
	}
	var pos []posAcc
	probs := make([]float64, len(RatioEdges)+2)
	var curRow int64
	var curRule string
	defer func() {
		if p := recover(); p != nil {
			rep, err = nil, fmt.Errorf("replay: rule %s failed on row %d: %v", curRule, curRow, p)
		}
	}()
	for r.Next() {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cfg.MaxSteps > 0 && rep.Steps >= cfg.MaxSteps {
			break
		}
		st, b := r.Step(), r.Block()
		row := r.Row()
		curRow = row
		g := len(st.Tokens)
		rep.Steps++
		rep.V = len(st.P[0])
		rep.MaxGamma = max(rep.MaxGamma, g)
		for len(pos) < g {
			pos = append(pos, posAcc{})
		}
		for i := 0; i < g; i++ {
			p, q := r.procP(i), r.procQ(i)
			a, tv, kl := divergences(p, q, !cfg.SkipDivergences)
			pa := &pos[i]
			pa.n++
			pa.alpha += a
			alphaAll.Add(a)
			pa.tv += tv
			if math.IsInf(kl, 1) {
				pa.inf++
			} else {
				pa.kl += kl
			}
		}
		ratioCells(probs, r.procP(0), r.procQ(0))
		if len(st.Emitted) > 0 {
			logged.Add(float64(len(st.Emitted)))
			loggedCells.add(probs, ratioCell(r.procP(0), r.procQ(0), st.Emitted[0]))
		}
		var greedyProbs [2]float64
		am := -1
		for _, a := range accs {
			curRule = a.rule.Name
			res := StepResult{Row: row, PromptID: st.PromptID, Step: st.Step, Rule: a.rule.Name,
				AcceptedExact: math.NaN(), EmittedExact: math.NaN()}
			if a.lawer != nil {
				a.lawer.Law(b, &a.law)
				res.AcceptedExact, res.EmittedExact = a.law.ExpectedAccepted(), a.law.ExpectedEmitted()
				a.accEx.Add(res.AcceptedExact)
				a.emEx.Add(res.EmittedExact)
			}
			rng := a.stream.Reset(cfg.Seed, sim.StreamID(a.streamName, uint64(row)))
			sa, se := 0.0, 0.0
			first := -1
			for k := 0; k < cfg.Reps; k++ {
				o := a.rule.Algo.Accept(rng, b)
				if err := sim.CheckOutcome(b, o); err != nil {
					return nil, fmt.Errorf("replay: rule %s on row %d: %v", a.rule.Name, row, err)
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
			res.AcceptedSampled, res.EmittedSampled = sa/float64(cfg.Reps), se/float64(cfg.Reps)
			if a.lawer != nil {
				a.diff.Add(res.EmittedSampled - res.EmittedExact)
			}
			if a.rule.Greedy {
				if am < 0 {
					am = sim.ArgmaxRow(b.P[0])
					greedyProbs = [2]float64{1, 0}
				}
				c := 1
				if first == am {
					c = 0
				}
				a.cells.add(greedyProbs[:], c)
			} else if first >= 0 {
				a.cells.add(probs, ratioCell(r.procP(0), r.procQ(0), first))
			}
			if cfg.PerStep != nil {
				if err := cfg.PerStep(res); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	for i, pa := range pos {
		ps := PositionStats{Position: i + 1, Steps: pa.n, KLInfinite: pa.inf}
		if pa.n > 0 {
			ps.MeanAlpha, ps.MeanTV = pa.alpha/float64(pa.n), pa.tv/float64(pa.n)
		}
		if pa.n > pa.inf {
			ps.MeanKL = pa.kl / float64(pa.n-pa.inf)
		}
		if cfg.SkipDivergences {
			ps.MeanTV, ps.MeanKL = math.NaN(), math.NaN()
		}
		rep.Positions = append(rep.Positions, ps)
	}
	rep.MeanAlpha = alphaAll.Summary(0.95).Mean
	ls := logged.Summary(0.95)
	rep.LoggedSteps, rep.LoggedMeanEmitted, rep.LoggedCI95 = ls.N, ls.Mean, [2]float64{ls.Lo, ls.Hi}
	rep.LoggedLossless = loggedCells.test(ratioCellNames(), cfg.Level)
	for _, a := range accs {
		rr := RuleReport{Name: a.rule.Name, Steps: rep.Steps, HasLaw: a.lawer != nil,
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
		names := ratioCellNames()
		if a.rule.Greedy {
			names = []string{"argmax p_1", "other"}
		}
		rr.Lossless = a.cells.test(names, cfg.Level)
		rep.Rules = append(rep.Rules, rr)
	}
	rep.Warnings = r.Warnings()
	return rep, nil
}

func (c *cellCounter) add(probs []float64, cell int) {
	for i, p := range probs {
		c.exp[i] += p
	}
	if cell >= 0 {
		c.obs[cell]++
	}
}

func (c *cellCounter) test(names []string, level float64) LosslessCheck {
	lc := LosslessCheck{Cells: names, Observed: c.obs, Expected: c.exp, Verdict: "no data"}
	n := 0.0
	for _, e := range c.exp {
		n += e
	}
	if n == 0 {
		return lc
	}
	probs := make([]float64, len(c.exp))
	for i, e := range c.exp {
		probs[i] = e / n
	}
	res, err := stattest.ChiSquare(c.obs, probs, 0)
	if err != nil {
		lc.Verdict = "error: " + err.Error()
		return lc
	}
	lc.Stat, lc.DF, lc.PValue = res.Stat, res.DF, res.PValue
	lc.Verdict = "consistent"
	if res.PValue < level {
		lc.Verdict = "violated"
	}
	return lc
}

func ratioCellNames() []string {
	names := []string{"p=0"}
	lo := "0"
	for _, e := range RatioEdges {
		names = append(names, fmt.Sprintf("q/p in (%s,%g]", lo, e))
		lo = fmt.Sprint(e)
	}
	return append(names, fmt.Sprintf("q/p in (%s,inf)", lo))
}

// ratioCell returns the cell of token t: 0 if p(t) = 0, else 1 + the
// index of the first edge e with q(t) ≤ e·p(t).
func ratioCell(p, q []float32, t int) int {
	pt, qt := float64(p[t]), float64(q[t])
	if pt == 0 {
		return 0
	}
	for k, e := range RatioEdges {
		if qt <= e*pt {
			return 1 + k
		}
	}
	return 1 + len(RatioEdges)
}

// ratioCells writes into dst the p-mass of every ratio cell.
func ratioCells(dst []float64, p, q []float32) {
	clear(dst)
	for t := range p {
		pt := float64(p[t])
		if pt == 0 {
			continue
		}
		dst[ratioCell(p, q, t)] += pt
	}
	s := 0.0
	for _, v := range dst {
		s += v
	}
	for i := range dst {
		dst[i] /= s
	}
}

// divergences returns Σmin(p, q), TV(p, q) and KL(p‖q) (nats; +Inf when
// q = 0 < p somewhere); with full unset, only the first.
func divergences(p, q []float32, full bool) (alpha, tv, kl float64) {
	q = q[:len(p)]
	if !full {
		for x := range p {
			alpha += float64(min(p[x], q[x]))
		}
		return alpha, 0, 0
	}
	var sp, sq float64
	for x := range p {
		a, b := float64(p[x]), float64(q[x])
		sp += a
		sq += b
		alpha += math.Min(a, b)
		if a > 0 {
			if b == 0 {
				kl = math.Inf(1)
			} else if !math.IsInf(kl, 1) {
				kl += a * math.Log(a/b)
			}
		}
	}
	// TV = ½Σ|p - q| = ½(Σp + Σq) - Σmin(p, q).
	tv = (sp+sq)/2 - alpha
	return alpha, tv, kl
}
