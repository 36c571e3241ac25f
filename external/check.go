package external

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/stattest"
)

// This file is a batched driver of package check's statistical tests for
// any check.Stepper: the same trials (trial t draws its drafts from the
// keyed stream ("check/draft", t), context t mod contexts), the same cells
// (pools: bins of equal target mass sorted by p/q, per context and
// position; pairs: the first token, the first two and the whole first γ+1
// jointly) and the same verdict and check.Result as check.Pool and
// check.Pair. It differs in one place: a batch's rule randomness is one
// keyed stream ("check/external", batch) handed to the Stepper, since an
// external implementation answers whole batches. When package check
// consumes Steppers itself, these functions become calls into it.

// Defaults of the driver.
const (
	// DefaultBatch is the batch size B (rows per round trip).
	DefaultBatch = 1024
	// Cells, as in package check.
	minPerBin     = 20
	maxBins       = 256
	maxJointCells = 4096
)

// CheckConfig configures a check through a Stepper.
type CheckConfig struct {
	check.Config
	// Batch is the number of steps per Steps call (DefaultBatch when 0).
	Batch int
}

func (c *CheckConfig) defaults() error {
	if c.Level == 0 {
		c.Level = check.DefaultLevel
	}
	if c.Power == 0 {
		c.Power = check.DefaultPower
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	switch {
	case c.Trials < 1:
		return fmt.Errorf("check: trials = %d; run at least 1 trial", c.Trials)
	case c.Batch < 1 || c.Batch > 1<<20:
		return fmt.Errorf("check: batch = %d; use 1 <= batch <= %d", c.Batch, 1<<20)
	case !(c.Level > 0 && c.Level < 1):
		return fmt.Errorf("check: level = %g; use a significance level in (0, 1)", c.Level)
	case !(c.Power > c.Level && c.Power < 1):
		return fmt.Errorf("check: power = %g; use a power in (level, 1)", c.Power)
	case c.Gamma < 1 || c.Gamma > sim.MaxGamma:
		return fmt.Errorf("check: gamma = %d; use 1 <= gamma <= %d", c.Gamma, sim.MaxGamma)
	case c.Greedy:
		return fmt.Errorf("check: greedy decoding is checked with 'simulate exact'")
	}
	return nil
}

// counts accumulates a check's outcome statistics.
type counts struct {
	accepted, examined, emitted, emitSq, invalid int64
}

func (t *counts) add(b *sim.Block, o sim.Outcome) {
	g := len(b.Tokens)
	t.accepted += int64(o.Accepted)
	t.examined += int64(min(o.Accepted+1, g))
	e := int64(o.Emitted())
	t.emitted += e
	t.emitSq += e * e
}

func (t *counts) fill(r *check.Result, n int64) {
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

// batches runs the trials in batches: fill(t, i) prepares trial t in slot
// i, then s.Steps runs the batch, then tally(t, i) records it.
func batches(ctx context.Context, s check.Stepper, cfg CheckConfig, bs []sim.Block, outs []sim.Outcome,
	fill func(t int64, i int), tally func(t int64, i int) error) (int64, error) {
	var done int64
	for k := int64(0); done < cfg.Trials; k++ {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		n := int(min(int64(cfg.Batch), cfg.Trials-done))
		for i := 0; i < n; i++ {
			fill(done+int64(i), i)
		}
		if err := s.Steps(sim.NewRand(cfg.Seed, sim.StreamID("check/external", uint64(k))), bs[:n], outs[:n]); err != nil {
			return done, err
		}
		for i := 0; i < n; i++ {
			if err := tally(done+int64(i), i); err != nil {
				return done, err
			}
		}
		done += int64(n)
		if cfg.Progress != nil {
			cfg.Progress(done, cfg.Trials)
		}
	}
	return done, nil
}

// emittedSeq appends the step's emitted tokens (at most γ+1) to seq.
func emittedSeq(seq []int, b *sim.Block, o sim.Outcome, v int) []int {
	g := len(b.Tokens)
	seq = append(seq[:0], b.Tokens[:min(max(o.Accepted, 0), g)]...)
	if o.Next != sim.NoToken && o.Next >= 0 && o.Next < v && len(seq) <= g {
		seq = append(seq, o.Next)
	}
	return seq
}

// Pool checks s on a positional pool whose rows are the target and draft
// laws the check tests against (for sampling transforms, the transformed
// pool: see TransformPool). Blocks carry Ctx, so an Impl that was given
// the pool's rows with SetPool receives context indices only. A step
// that emits a token of target probability 0 counts as invalid.
func Pool(ctx context.Context, pl *sim.Pool, s check.Stepper, cfg CheckConfig) (check.Result, error) {
	cfg.Gamma = pl.Gamma
	if err := cfg.defaults(); err != nil {
		return check.Result{}, err
	}
	g, v, nc := pl.Gamma, pl.V, pl.Contexts
	perCtx := cfg.Trials / int64(nc)
	bins := int(min(int64(maxBins), max(2, perCtx/minPerBin)))
	binOf := make([]uint16, nc*(g+1)*v)
	binP := make([]float64, nc*(g+1)*bins)
	pAlias := make([]*sim.Alias, nc*(g+1))
	order := make([]int, v)
	key := make([]float64, v)
	p64 := make([]float64, v)
	for c := 0; c < nc; c++ {
		for i := 0; i <= g; i++ {
			sim.Float64s(p64, pl.PRow(c, i))
			pAlias[c*(g+1)+i] = sim.NewAlias(p64)
			for x := range order {
				order[x], key[x] = x, p64[x]
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
	var replay sim.Block
	bs := make([]sim.Block, cfg.Batch)
	outs := make([]sim.Outcome, cfg.Batch)
	streams := make([]*sim.Stream, cfg.Batch)
	for i := range streams {
		streams[i] = sim.NewStream()
	}
	obs := make([]int64, nc*(g+1)*bins)
	var tot counts
	seq := make([]int, 0, g+1)
	fill := func(t int64, i int) {
		c := int(t % int64(nc))
		rd := streams[i].Reset(cfg.Seed, sim.StreamID("check/draft", uint64(t)))
		pl.Fill(rd, c, &bs[i])
		bs[i].Ctx = c // in step mode the Stepper overwrites the drafts
	}
	tally := func(t int64, i int) error {
		c, b, o := int(t%int64(nc)), &bs[i], outs[i]
		// Replay the draft draws so the stream continues where
		// check.Pool's does (in step mode the drafts came from s).
		rd := streams[i].Reset(cfg.Seed, sim.StreamID("check/draft", uint64(t)))
		pl.Fill(rd, c, &replay)
		bad := sim.CheckOutcome(b, o) != nil
		seq = emittedSeq(seq, b, o, v)
		for j, x := range seq {
			if pl.PRow(c, j)[x] <= 0 {
				bad = true
			}
		}
		if bad {
			tot.invalid++
		}
		tot.add(b, o)
		for len(seq) <= g {
			seq = append(seq, pAlias[c*(g+1)+len(seq)].Sample(rd))
		}
		for j := 0; j <= g; j++ {
			obs[(c*(g+1)+j)*bins+int(binOf[(c*(g+1)+j)*v+seq[j]])]++
		}
		return nil
	}
	n, err := batches(ctx, s, cfg, bs, outs, fill, tally)
	r := check.Result{Level: cfg.Level, Power: cfg.Power, Trials: n, Seed: cfg.Seed, Interrupted: ctx.Err() != nil}
	if err != nil && ctx.Err() == nil {
		return r, err
	}
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
			o, probs := obs[k:k+bins], binP[k:k+bins]
			if err := tb.Add(o, probs); err != nil {
				return r, err
			}
			obsAll = append(obsAll, o...)
			for _, p := range probs {
				pAll = append(pAll, p/float64(nc))
			}
		}
		names = append(names, fmt.Sprintf("position %d", i+1))
		tables = append(tables, tb)
		tvs = append(tvs, plugInTV(obsAll, pAll))
	}
	return r, finish(&r, cfg, names, tables, tvs)
}

// Pair checks s in verify mode on a small model pair from the empty
// context (rows depend on the drafts, so they travel with every batch).
func Pair(ctx context.Context, pr sim.Pair, s check.Stepper, cfg CheckConfig) (check.Result, error) {
	if err := cfg.defaults(); err != nil {
		return check.Result{}, err
	}
	if err := pr.Check(); err != nil {
		return check.Result{}, err
	}
	if check.StepMode(s) {
		return check.Result{}, fmt.Errorf("check: step mode needs a pool source (rows that do not depend on the drafts); use --source dirichlet:... or --mode verify")
	}
	g, v := cfg.Gamma, pr.P.Vocab()
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
	bs := make([]sim.Block, cfg.Batch)
	outs := make([]sim.Outcome, cfg.Batch)
	streams := make([]*sim.Stream, cfg.Batch)
	store := make([][]float64, cfg.Batch)
	for i := range bs {
		streams[i] = sim.NewStream()
		rows := make([]float64, (2*g+1)*v)
		store[i] = rows
		bs[i] = sim.Block{Tokens: make([]int, g), Q: make([]sim.Row, g), P: make([]sim.Row, g+1), Ctx: -1}
		for j := 0; j <= g; j++ {
			bs[i].P[j] = sim.F64(rows[j*v : (j+1)*v])
		}
		for j := 0; j < g; j++ {
			bs[i].Q[j] = sim.F64(rows[(g+1+j)*v : (g+2+j)*v])
		}
	}
	obs := make([]int64, offs[len(lens)])
	row := make([]float64, v)
	seq := make([]int, 0, g+1)
	var tot counts
	// rowOf is the storage of block i's row j (q: draft row j).
	rowOf := func(i, j int, q bool) []float64 {
		if q {
			j += g + 1
		}
		return store[i][j*v : (j+1)*v]
	}
	fill := func(t int64, i int) {
		rd := streams[i].Reset(cfg.Seed, sim.StreamID("check/draft", uint64(t)))
		b := &bs[i]
		ctxTok := seq[:0]
		for j := 0; j < g; j++ {
			pr.P.Next(ctxTok, rowOf(i, j, false))
			q := rowOf(i, j, true)
			pr.Q.Next(ctxTok, q)
			b.Tokens[j] = sim.SampleCDF(rd.Float64(), q)
			ctxTok = append(ctxTok, b.Tokens[j])
		}
		pr.P.Next(ctxTok, rowOf(i, g, false))
	}
	tally := func(t int64, i int) error {
		rd := streams[i]
		b, o := &bs[i], outs[i]
		r := rd.Reset(cfg.Seed, sim.StreamID("check/draft", uint64(t)))
		for j := 0; j < g; j++ {
			r.Float64() // the draft draws of fill
		}
		bad := sim.CheckOutcome(b, o) != nil
		seq = emittedSeq(seq, b, o, v)
		for j, x := range seq {
			if b.P[j].At(x) <= 0 {
				bad = true
			}
		}
		if bad {
			tot.invalid++
		}
		tot.add(b, o)
		for len(seq) <= g {
			pr.P.Next(seq, row)
			seq = append(seq, sim.SampleCDF(r.Float64(), row))
		}
		for k, l := range lens {
			code := 0
			for _, x := range seq[:l] {
				code = code*v + x
			}
			obs[offs[k]+code]++
		}
		return nil
	}
	n, err := batches(ctx, s, cfg, bs, outs, fill, tally)
	r := check.Result{Level: cfg.Level, Power: cfg.Power, Trials: n, Seed: cfg.Seed, Interrupted: ctx.Err() != nil}
	if err != nil && ctx.Err() == nil {
		return r, err
	}
	tot.fill(&r, n)
	var names []string
	var tables []*stattest.Table
	var tvs []float64
	for k, l := range lens {
		probs := seqLaw(pr.P, v, l)
		o := obs[offs[k]:offs[k+1]]
		tb := &stattest.Table{}
		if e := tb.Add(o, probs); e != nil {
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
		tvs = append(tvs, plugInTV(o, probs))
	}
	return r, finish(&r, cfg, names, tables, tvs)
}

// finish turns per-test tables into the verdict (as package check does).
func finish(r *check.Result, cfg CheckConfig, names []string, tables []*stattest.Table, tvs []float64) error {
	ps := make([]float64, len(tables))
	for i, tb := range tables {
		res, err := tb.Test(stattest.DefaultMinExpected)
		if err != nil {
			return err
		}
		t := check.Test{Name: names[i], Stat: res.Stat, DF: res.DF, PValue: res.PValue, Cells: res.Cells, Pooled: res.Pooled,
			MinDetTV: stattest.MinDetectableTV(res.N, max(res.DF, 1), cfg.Level, cfg.Power)}
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
	r.Verdict = check.Preserved
	if r.PValue < cfg.Level || r.Invalid > 0 {
		r.Verdict = check.Violated
	}
	if len(r.Tests) > 0 {
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

// TransformPool returns the pool of the laws a run with sampling s draws
// from: every row of pl (probabilities) turned into logits log p and
// through s (data.Sampling.Apply). Greedy sampling (temperature 0) is
// refused: its one-hot rows leave nothing to test statistically.
func TransformPool(pl *sim.Pool, s data.Sampling) (*sim.Pool, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Greedy() {
		return nil, fmt.Errorf("temperature = 0 is greedy decoding; check it with 'simulate exact'")
	}
	out := &sim.Pool{P: make([][]float32, len(pl.P)), Q: make([][]float32, len(pl.Q))}
	var tr data.Transformer
	logits := make([]float32, pl.V)
	for _, part := range []struct{ dst, src [][]float32 }{{out.P, pl.P}, {out.Q, pl.Q}} {
		for i, r := range part.src {
			for x, p := range r {
				logits[x] = float32(math.Log(float64(p)))
			}
			part.dst[i] = make([]float32, pl.V)
			if err := tr.Apply(s, part.dst[i], logits); err != nil {
				return nil, fmt.Errorf("row %d: %v", i, err)
			}
		}
	}
	return sim.PoolFromRows(pl.Name+" | "+s.String(), pl.Gamma, out.P, out.Q)
}
