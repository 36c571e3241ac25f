package data

import (
	"context"
	"fmt"
	"math"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
)

// RunConfig describes a logged speculative run of a synthetic source.
type RunConfig struct {
	// Steps is the number of steps (rows) to log; Gamma the draft length.
	Steps, Gamma int
	// StepsPerPrompt ends a prompt (the context restarts empty) every so
	// many steps; 0 means one prompt for the whole run.
	StepsPerPrompt int
	// Seed seeds the run's single random stream.
	Seed uint64
	// RunID names the run in every row.
	RunID string
	// Sampling is applied to the model rows before drafting and
	// verification. With Logits set the file stores the log-probabilities
	// of the model rows as raw logits (the reader re-applies Sampling);
	// otherwise it stores the processed probabilities, and Sampling must
	// be the identity (T = 1, no filters) or greedy.
	Sampling Sampling
	Logits   bool
	// Prompts, if set, are the contexts prompts start from (prompt k
	// starts from Prompts[k mod len(Prompts)]); otherwise they start empty.
	Prompts [][]int
	// Rule is the acceptance rule the logged run uses (algos.Token{} for
	// token verification); it decides each step's emitted tokens on the
	// processed rows, drawing from the run's stream.
	Rule sim.Algorithm
}

func (c RunConfig) validate() error {
	switch {
	case c.Steps < 1:
		return fmt.Errorf("steps = %d; log at least one step", c.Steps)
	case c.Gamma < 1 || c.Gamma > sim.MaxGamma:
		return fmt.Errorf("gamma = %d; use 1 <= gamma <= %d", c.Gamma, sim.MaxGamma)
	case c.StepsPerPrompt < 0:
		return fmt.Errorf("steps per prompt = %d; use 0 (one prompt) or a positive count", c.StepsPerPrompt)
	case c.Rule == nil:
		return fmt.Errorf("run config: Rule is nil; set the acceptance rule the run uses (algos.Token{} for token verification)")
	}
	return c.Sampling.Validate()
}

// LogRun runs speculative decoding with cfg.Rule on a model pair and
// writes one row per step: at each step the draft x_i ~ q_i is drawn from
// the processed draft rows after the context and x_<i, the target rows
// p_1..p_{γ+1} are evaluated at the same prefixes, the rule decides the
// step on the processed rows, and the emitted tokens x_1..x_n, t extend
// the context. Names label the models. It stops early, with
// ctx.Err(), when ctx is cancelled.
func LogRun(ctx context.Context, w *Writer, pair sim.Pair, target, draft string, cfg RunConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	identity := cfg.Sampling == Sampling{Temperature: 1, TopP: 1}
	if !cfg.Logits && !identity && !cfg.Sampling.Greedy() {
		return fmt.Errorf("sampling %s with probability rows: store logits (the reader applies the transform) or use T = 1 without filters", cfg.Sampling)
	}
	if pair.P.Vocab() != pair.Q.Vocab() {
		return fmt.Errorf("pair %s: the target has %d tokens and the draft %d; use models over one vocabulary", pair.Name, pair.P.Vocab(), pair.Q.Vocab())
	}
	v, g := pair.P.Vocab(), cfg.Gamma
	raw := func(n int) [][]float32 { return sizeRows(nil, n, v) }
	d := &runDrafter{pair: pair, cfg: cfg, p64: make([]float64, v), q64: make([]float64, v),
		mp: raw(g + 1), mq: raw(g), sp: raw(g + 1), sq: raw(g), pp: raw(g + 1), pq: raw(g),
		scratch: make([]float32, v)}
	st := &Step{RunID: cfg.RunID, TargetModel: target, DraftModel: draft, Sampling: cfg.Sampling,
		Kind: KindProbs, Tokens: make([]int, g), Q: d.sq, P: d.sp}
	if cfg.Logits {
		st.Kind = KindLogits
	}
	d.blk = sim.Block{Tokens: st.Tokens, Q: make([]sim.Row, g), P: make([]sim.Row, g+1), Ctx: -1}
	for i := range d.blk.Q {
		d.blk.Q[i] = sim.F32(d.pq[i])
	}
	for i := range d.blk.P {
		d.blk.P[i] = sim.F32(d.pp[i])
	}
	// Step k draws its draft and the rule's coins from the streams of
	// unit k of run.Named("data/logrun").
	wk, s, err := stepRun(cfg, "data/logrun", d)
	if err != nil {
		return err
	}
	for step := 0; step < cfg.Steps; step++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if step == 0 || (cfg.StepsPerPrompt > 0 && step%cfg.StepsPerPrompt == 0) {
			st.PromptID, st.Step = 0, 0
			if cfg.StepsPerPrompt > 0 {
				st.PromptID = int64(step / cfg.StepsPerPrompt)
			}
			d.seq = d.seq[:0]
			if len(cfg.Prompts) > 0 {
				d.seq = append(d.seq, cfg.Prompts[int(st.PromptID)%len(cfg.Prompts)]...)
			}
		}
		s.Reset(uint64(step))
		r, err := wk.Round(s, int64(step))
		if err != nil {
			return err
		}
		if err := sim.CheckOutcome(r.Block, r.Outcome()); err != nil {
			return fmt.Errorf("step %d: rule %T: %w", step, cfg.Rule, err)
		}
		st.Emitted = emitted(st.Emitted[:0], r.Block, r.Outcome())
		d.seq = append(d.seq, st.Emitted...)
		if len(d.seq) > 64 {
			d.seq = append(d.seq[:0], d.seq[len(d.seq)-16:]...) // Markov contexts need the last few tokens only
		}
		if err := w.Write(st); err != nil {
			return err
		}
		st.Step++
	}
	return nil
}

// stepRun returns a worker of the run whose steps are drafted by d and
// decided by cfg.Rule, and its streams, those of run.Named(name): the
// caller moves them to unit k before step k.
func stepRun(cfg RunConfig, name string, d run.ChainDrafter) (*run.Worker, *run.Streams, error) {
	l := &run.Loop{Seed: cfg.Seed, Keys: run.Named(name), Chains: d,
		Verifiers: []run.Verifier{run.Chain(cfg.Rule)}}
	w, err := l.NewWorker()
	if err != nil {
		return nil, nil, err
	}
	return w, run.NewStreams(l.Seed, l.Keys), nil
}

// runDrafter drafts LogRun's steps: after the context seq it evaluates
// both models at every prefix (model rows mp, mq), keeps the rows to
// store (sp, sq) and the processed rows the run uses (pp, pq), and draws
// x_i ~ pq_i from the Draft stream. Each step's block is blk, whose rows
// point at pp and pq and whose tokens are the step's.
type runDrafter struct {
	pair                   sim.Pair
	cfg                    RunConfig
	tr                     Transformer
	seq                    []int
	p64, q64               []float64
	mp, mq, sp, sq, pp, pq [][]float32
	scratch                []float32
	blk                    sim.Block
}

// rows evaluates both models after ctx into float32 rows p and q.
func (d *runDrafter) rows(ctx []int, p, q []float32) {
	d.pair.P.Next(ctx, d.p64)
	d.pair.Q.Next(ctx, d.q64)
	for x := range p {
		p[x], q[x] = float32(d.p64[x]), float32(d.q64[x])
	}
}

func (d *runDrafter) DraftChain(r *run.Round, dst *sim.Block) error {
	g, rng := d.cfg.Gamma, r.Rand(run.Draft)
	base := len(d.seq)
	for i := 0; i <= g; i++ {
		q := d.mq[min(i, g-1)]
		if i == g {
			q = d.scratch
		}
		d.rows(d.seq, d.mp[i], q)
		if err := store(&d.tr, d.cfg, d.mp[i], d.sp[i], d.pp[i]); err != nil {
			return fmt.Errorf("step %d: target row %d: %w", r.Trial, i+1, err)
		}
		if i == g {
			break
		}
		if err := store(&d.tr, d.cfg, d.mq[i], d.sq[i], d.pq[i]); err != nil {
			return fmt.Errorf("step %d: draft row %d: %w", r.Trial, i+1, err)
		}
		x := sim.SampleRow(rng.Float64(), sim.F32(d.pq[i]))
		d.blk.Tokens[i] = x
		d.seq = append(d.seq, x)
	}
	d.seq = d.seq[:base]
	*dst = d.blk
	return nil
}

// store writes the row to keep in the file (probabilities, or their logs
// as logits) and the processed row the run uses.
func store(tr *Transformer, cfg RunConfig, model, stored, processed []float32) error {
	if !cfg.Logits {
		if cfg.Sampling.Greedy() {
			if err := tr.Apply(cfg.Sampling, stored, model); err != nil {
				return err
			}
		} else {
			copy(stored, model)
		}
		copy(processed, stored)
		return nil
	}
	for x, p := range model {
		stored[x] = float32(math.Log(float64(p)))
	}
	return tr.Apply(cfg.Sampling, processed, stored)
}

// emitted appends the tokens a step with outcome o emits to dst: the
// accepted draft tokens, then o.Next unless it is NoToken.
func emitted(dst []int, b *sim.Block, o sim.Outcome) []int {
	dst = append(dst, b.Tokens[:o.Accepted]...)
	if o.Next != sim.NoToken {
		dst = append(dst, o.Next)
	}
	return dst
}

// LogPool logs a pool's speculative run: at each step the pool's Next
// draws a context c uniformly and the draft from c's rows, and cfg.Rule
// decides the emitted tokens.
func LogPool(ctx context.Context, w *Writer, pl *sim.Pool, cfg RunConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.Gamma != pl.Gamma {
		return fmt.Errorf("gamma = %d but the pool was built for gamma = %d", cfg.Gamma, pl.Gamma)
	}
	if cfg.Logits || cfg.Sampling != (Sampling{Temperature: 1, TopP: 1}) {
		return fmt.Errorf("pools are logged as probabilities at T = 1 without filters")
	}
	g := pl.Gamma
	st := &Step{RunID: cfg.RunID, TargetModel: pl.Name + "/p", DraftModel: pl.Name + "/q", Sampling: cfg.Sampling,
		Kind: KindProbs, Q: make([][]float32, g), P: make([][]float32, g+1)}
	// Step k draws its context, its draft and the rule's coins from the
	// streams of unit k of run.Named("data/logpool").
	wk, s, err := stepRun(cfg, "data/logpool", run.Blocks(pl))
	if err != nil {
		return err
	}
	for step := 0; step < cfg.Steps; step++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if cfg.StepsPerPrompt > 0 && step%cfg.StepsPerPrompt == 0 {
			st.PromptID, st.Step = int64(step/cfg.StepsPerPrompt), 0
		}
		s.Reset(uint64(step))
		r, err := wk.Round(s, int64(step))
		if err != nil {
			return err
		}
		blk, o := r.Block, r.Outcome()
		c := blk.Ctx
		st.Tokens = blk.Tokens
		for i := 0; i < g; i++ {
			st.Q[i] = pl.QRow(c, i)
		}
		for i := 0; i <= g; i++ {
			st.P[i] = pl.PRow(c, i)
		}
		if err := sim.CheckOutcome(blk, o); err != nil {
			return fmt.Errorf("step %d: rule %T: %w", step, cfg.Rule, err)
		}
		st.Emitted = emitted(st.Emitted[:0], blk, o)
		if err := w.Write(st); err != nil {
			return err
		}
		st.Step++
	}
	return nil
}
