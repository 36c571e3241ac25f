package check

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
)

// Verdicts.
const (
	Preserved = "preserved"
	Violated  = "violated"
)

// Config configures a statistical check.
type Config struct {
	Gamma  int
	Trials int64
	Seed   uint64
	// Level is the family-wise significance level (default DefaultLevel);
	// Power is the power at which the minimum detectable TV is reported
	// (default DefaultPower).
	Level, Power float64
	// Greedy compares against argmax decoding of the target.
	Greedy  bool
	Workers int
	// Progress, if set, receives the number of finished trials.
	Progress func(done, total int64)
}

// Defaults of Config.
const (
	DefaultLevel = 0.01
	DefaultPower = 0.9
	// minPerBin is the expected count per bin the pool binning aims at.
	minPerBin = 20
	// maxBins bounds the bins per (context, position).
	maxBins = 256
	// maxJointCells bounds the cells of the joint test on model pairs.
	maxJointCells = 4096
)

// Test is one chi-squared test of a check.
type Test struct {
	Name     string   `json:"name"`
	Stat     float64  `json:"stat"`
	DF       int      `json:"df"`
	PValue   float64  `json:"p_value"`
	PHolm    float64  `json:"p_holm"`
	Cells    int      `json:"cells"`
	TVBinned float64  `json:"tv_binned"`
	MinDetTV float64  `json:"min_detectable_tv"`
	Pooled   int      `json:"pooled"`
	Warnings []string `json:"warnings,omitempty"`
}

// Result reports a statistical check.
type Result struct {
	Verdict string `json:"verdict"`
	// PValue is the smallest Holm-adjusted p-value across Tests.
	PValue float64 `json:"p_value"`
	// TVEstimate is the plug-in TV between the observed and the target
	// cell frequencies of the first test (binned; biased up by noise of
	// order sqrt(cells/trials)).
	TVEstimate float64 `json:"tv_estimate"`
	// MinDetectableTV is the smallest TV (averaged over contexts) that the
	// first test detects with probability Power at level Level.
	MinDetectableTV float64 `json:"min_detectable_tv"`
	Level           float64 `json:"level"`
	Power           float64 `json:"power"`
	Trials          int64   `json:"trials"`
	Seed            uint64  `json:"seed"`
	// AlphaHat is accepted draft tokens per examined draft position.
	AlphaHat     float64 `json:"alpha_hat"`
	MeanAccepted float64 `json:"mean_accepted"`
	MeanEmitted  float64 `json:"mean_emitted"`
	// EmittedCI is a 95% normal interval for MeanEmitted.
	EmittedCI [2]float64 `json:"mean_emitted_ci95"`
	// Invalid counts outcomes that broke sim.CheckOutcome (should be 0).
	Invalid int64  `json:"invalid_outcomes"`
	Tests   []Test `json:"tests"`
	// Interrupted is set when the check was cancelled; the result then
	// holds the finished trials only.
	Interrupted bool `json:"interrupted"`
}

func (c *Config) defaults() error {
	if c.Level == 0 {
		c.Level = DefaultLevel
	}
	if c.Power == 0 {
		c.Power = DefaultPower
	}
	switch {
	case c.Trials < 1:
		return fmt.Errorf("check: trials = %d; run at least 1 trial", c.Trials)
	case !(c.Level > 0 && c.Level < 1):
		return fmt.Errorf("check: level = %g; use a significance level in (0, 1)", c.Level)
	case !(c.Power > c.Level && c.Power < 1):
		return fmt.Errorf("check: power = %g; use a power in (level, 1)", c.Power)
	case c.Gamma < 1 || c.Gamma > sim.MaxGamma:
		return fmt.Errorf("check: gamma = %d; use 1 <= gamma <= %d", c.Gamma, sim.MaxGamma)
	}
	return nil
}

// tally is the per-chunk accumulator shared by both kinds of check.
type tally struct {
	counts   []int64 // cell counts, layout chosen by the check kind
	accepted int64
	examined int64
	emitted  int64
	emitSq   int64
	invalid  int64
	// scratch: keyed streams for drafts and rule coins, reset per trial
	draft, rule *sim.Stream
	blk         sim.Block
	seq         []int
	rows        [][]float64
}

func (t *tally) add(b *sim.Block, o sim.Outcome) {
	if sim.CheckOutcome(b, o) != nil {
		t.invalid++
		o = sim.Outcome{Accepted: min(max(o.Accepted, 0), len(b.Tokens)), Next: sim.NoToken}
	}
	g := len(b.Tokens)
	t.accepted += int64(o.Accepted)
	t.examined += int64(min(o.Accepted+1, g))
	e := int64(o.Emitted())
	t.emitted += e
	t.emitSq += e * e
}

func merge(dst, src *tally) {
	for i, v := range src.counts {
		dst.counts[i] += v
	}
	dst.accepted += src.accepted
	dst.examined += src.examined
	dst.emitted += src.emitted
	dst.emitSq += src.emitSq
	dst.invalid += src.invalid
}

func (t *tally) fill(r *Result, n int64) {
	if n == 0 {
		return
	}
	r.MeanAccepted = float64(t.accepted) / float64(n)
	if t.examined > 0 {
		r.AlphaHat = float64(t.accepted) / float64(t.examined)
	}
	s := stattest.Summarize(float64(t.emitted), float64(t.emitSq), n, 0.95)
	r.MeanEmitted, r.EmittedCI = s.Mean, [2]float64{s.Lo, s.Hi}
	r.Invalid = t.invalid
}

// finish turns per-test tables into the verdict.
func finish(r *Result, cfg Config, names []string, tables []*stattest.Table, tvs []float64) error {
	ps := make([]float64, len(tables))
	for i, tb := range tables {
		res, err := tb.Test(stattest.DefaultMinExpected)
		if err != nil {
			return err
		}
		t := Test{Name: names[i], Stat: res.Stat, DF: res.DF, PValue: res.PValue, Cells: res.Cells, Pooled: res.Pooled,
			TVBinned: tvs[i], MinDetTV: stattest.MinDetectableTV(res.N, max(res.DF, 1), cfg.Level, cfg.Power)}
		for _, w := range res.Warnings {
			t.Warnings = append(t.Warnings, w.Error())
		}
		r.Tests = append(r.Tests, t)
		ps[i] = res.PValue
	}
	adj := stattest.Holm(ps)
	r.PValue = 1
	for i := range r.Tests {
		r.Tests[i].PHolm = adj[i]
		r.PValue = math.Min(r.PValue, adj[i])
	}
	r.Verdict = Preserved
	if r.PValue < cfg.Level || r.Invalid > 0 {
		r.Verdict = Violated
	}
	if len(r.Tests) > 0 {
		r.TVEstimate = r.Tests[0].TVBinned
		r.MinDetectableTV = r.Tests[0].MinDetTV
	}
	return nil
}

// plugInTV returns ½ Σ |obs/n - prob| over cells.
func plugInTV(obs []int64, probs []float64) float64 {
	var n int64
	for _, o := range obs {
		n += o
	}
	if n == 0 {
		return 0
	}
	s := 0.0
	for i, o := range obs {
		s += math.Abs(float64(o)/float64(n) - probs[i])
	}
	return s / 2
}

// Pool checks rule a on a positional pool (see the package doc).
func Pool(ctx context.Context, pl *sim.Pool, a sim.Algorithm, cfg Config) (Result, error) {
	cfg.Gamma = pl.Gamma
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	if cfg.Greedy {
		return Result{}, fmt.Errorf("check: greedy rules are checked on model pairs (markov sources) or with 'simulate exact'")
	}
	g, v, nc := pl.Gamma, pl.V, pl.Contexts
	perCtx := cfg.Trials / int64(nc)
	bins := int(min(int64(maxBins), max(2, perCtx/minPerBin)))
	// binOf[(c*(g+1)+i)*v + x] is token x's bin; binP the bins' target mass.
	binOf := make([]uint16, nc*(g+1)*v)
	binP := make([]float64, nc*(g+1)*bins)
	pAlias := make([]*sim.Alias, nc*(g+1))
	order := make([]int, v)
	key := make([]float64, v)
	p64 := make([]float64, v)
	for c := 0; c < nc; c++ {
		for i := 0; i <= g; i++ {
			pr := pl.PRow(c, i)
			sim.Float64s(p64, pr)
			pAlias[c*(g+1)+i] = sim.NewAlias(p64)
			for x := range order {
				order[x] = x
				key[x] = p64[x]
				if i < g {
					if qx := float64(pl.QRow(c, i)[x]); qx > 0 {
						key[x] = p64[x] / qx
					} else {
						key[x] = math.Inf(1)
					}
				}
			}
			sort.SliceStable(order, func(a, b int) bool { return key[order[a]] < key[order[b]] })
			tot := 0.0
			for _, x := range order {
				tot += p64[x]
			}
			cum := 0.0
			base := (c*(g+1) + i) * v
			pb := binP[(c*(g+1)+i)*bins:]
			for _, x := range order {
				b := min(int(cum/tot*float64(bins)), bins-1)
				binOf[base+x] = uint16(b)
				pb[b] += p64[x] / tot
				cum += p64[x]
			}
		}
	}
	newAcc := func() *tally {
		return &tally{counts: make([]int64, nc*(g+1)*bins), seq: make([]int, 0, g+1), draft: sim.NewStream(), rule: sim.NewStream()}
	}
	trial := func(t int64, acc *tally) {
		c := int(t % int64(nc))
		rd := acc.draft.Reset(cfg.Seed, sim.StreamID("check/draft", uint64(t)))
		ra := acc.rule.Reset(cfg.Seed, sim.StreamID("check/rule", uint64(t)))
		pl.Fill(rd, c, &acc.blk)
		o := a.Accept(ra, &acc.blk)
		acc.add(&acc.blk, o)
		seq := append(acc.seq[:0], acc.blk.Tokens[:min(max(o.Accepted, 0), g)]...)
		if o.Next != sim.NoToken && o.Next >= 0 && o.Next < v && len(seq) <= g {
			seq = append(seq, o.Next)
		}
		for len(seq) <= g { // continue with the target
			seq = append(seq, pAlias[c*(g+1)+len(seq)].Sample(rd))
		}
		for i := 0; i <= g; i++ {
			acc.counts[(c*(g+1)+i)*bins+int(binOf[(c*(g+1)+i)*v+seq[i]])]++
		}
	}
	tot, n, err := sim.MonteCarlo(ctx, cfg.Trials, sim.MCOptions{Workers: cfg.Workers, Progress: cfg.Progress}, newAcc, trial, merge)
	r := Result{Level: cfg.Level, Power: cfg.Power, Trials: n, Seed: cfg.Seed, Interrupted: err != nil}
	tot.fill(&r, n)
	var names []string
	var tables []*stattest.Table
	var tvs []float64
	for i := 0; i <= g; i++ {
		tb := &stattest.Table{}
		var obsAll []int64
		var pAll []float64
		for c := 0; c < nc; c++ {
			k := (c*(g+1) + i) * bins
			obs, probs := tot.counts[k:k+bins], binP[k:k+bins]
			if err := tb.Add(obs, probs); err != nil {
				return r, err
			}
			obsAll = append(obsAll, obs...)
			for _, p := range probs {
				pAll = append(pAll, p/float64(nc))
			}
		}
		names = append(names, fmt.Sprintf("position %d", i+1))
		tables = append(tables, tb)
		tvs = append(tvs, plugInTV(obsAll, pAll))
	}
	if ferr := finish(&r, cfg, names, tables, tvs); ferr != nil {
		return r, ferr
	}
	return r, err
}

// Pair checks rule a on a small model pair from the empty context: tests
// of the first token, the first two jointly and, where V^(γ+1) ≤ 4096
// cells, the whole first γ+1 tokens jointly.
func Pair(ctx context.Context, pr sim.Pair, a sim.Algorithm, cfg Config) (Result, error) {
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	if err := pr.Check(); err != nil {
		return Result{}, err
	}
	g, v := cfg.Gamma, pr.P.Vocab()
	chain, err := sim.NewChain(pr, g)
	if err != nil {
		return Result{}, err
	}
	var target sim.Model = pr.P
	if cfg.Greedy {
		target = sim.Greedy{M: pr.P}
	}
	// Cell layouts: lengths 1, 2 and (if small) g+1.
	lens := []int{1}
	if g+1 >= 2 {
		lens = append(lens, 2)
	}
	if pow(v, g+1) <= maxJointCells && g+1 > 2 {
		lens = append(lens, g+1)
	}
	offs := make([]int, len(lens)+1)
	for i, l := range lens {
		offs[i+1] = offs[i] + pow(v, l)
	}
	newAcc := func() *tally {
		t := &tally{counts: make([]int64, offs[len(lens)]), seq: make([]int, 0, g+1), draft: sim.NewStream(), rule: sim.NewStream()}
		t.blk = sim.Block{Tokens: make([]int, g), Q: make([]sim.Row, g), P: make([]sim.Row, g+1), Ctx: -1}
		t.rows = make([][]float64, 2*g+2)
		for i := range t.rows {
			t.rows[i] = make([]float64, v)
		}
		for i := 0; i < g; i++ {
			t.blk.Q[i] = sim.F64(t.rows[g+1+i])
		}
		for i := 0; i <= g; i++ {
			t.blk.P[i] = sim.F64(t.rows[i])
		}
		return t
	}
	trial := func(t int64, acc *tally) {
		rd := acc.draft.Reset(cfg.Seed, sim.StreamID("check/draft", uint64(t)))
		ra := acc.rule.Reset(cfg.Seed, sim.StreamID("check/rule", uint64(t)))
		b := &acc.blk
		_ = chain.Next(rd, b) // a chain never runs out
		o := a.Accept(ra, b)
		acc.add(b, o)
		seq := append(acc.seq[:0], b.Tokens[:min(max(o.Accepted, 0), g)]...)
		if o.Next != sim.NoToken && o.Next >= 0 && o.Next < v && len(seq) <= g {
			seq = append(seq, o.Next)
		}
		row := acc.rows[2*g+1]
		for len(seq) <= g {
			target.Next(seq, row)
			seq = append(seq, sim.SampleCDF(rd.Float64(), row))
		}
		acc.seq = seq
		for k, l := range lens {
			code := 0
			for _, x := range seq[:l] {
				code = code*v + x
			}
			acc.counts[offs[k]+code]++
		}
	}
	tot, n, err := sim.MonteCarlo(ctx, cfg.Trials, sim.MCOptions{Workers: cfg.Workers, Progress: cfg.Progress}, newAcc, trial, merge)
	r := Result{Level: cfg.Level, Power: cfg.Power, Trials: n, Seed: cfg.Seed, Interrupted: err != nil}
	tot.fill(&r, n)
	var names []string
	var tables []*stattest.Table
	var tvs []float64
	for k, l := range lens {
		probs := seqLaw(target, v, l)
		obs := tot.counts[offs[k]:offs[k+1]]
		tb := &stattest.Table{}
		if e := tb.Add(obs, probs); e != nil {
			return r, e
		}
		switch l {
		case 1:
			names = append(names, "first token")
		case 2:
			names = append(names, "first two tokens (joint)")
		default:
			names = append(names, fmt.Sprintf("first %d tokens (joint)", l))
		}
		tables = append(tables, tb)
		tvs = append(tvs, plugInTV(obs, probs))
	}
	if ferr := finish(&r, cfg, names, tables, tvs); ferr != nil {
		return r, ferr
	}
	return r, err
}

// seqLaw returns the target law of the first l tokens from the empty
// context, indexed base-v with the first token most significant.
func seqLaw(m sim.Model, v, l int) []float64 {
	law := []float64{1}
	row := make([]float64, v)
	seq := make([]int, 0, l)
	for d := 0; d < l; d++ {
		next := make([]float64, len(law)*v)
		for code, w := range law {
			if w == 0 {
				continue
			}
			seq = seq[:d]
			for j, c := d-1, code; j >= 0; j-- {
				seq[j] = c % v
				c /= v
			}
			m.Next(seq, row)
			for t, pt := range row {
				next[code*v+t] = w * pt
			}
		}
		law = next
	}
	return law
}

func pow(b, e int) int {
	r := 1
	for range e {
		r *= b
		if r > 1<<30 {
			return r
		}
	}
	return r
}
