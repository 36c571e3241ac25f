package seq

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/stattest"
)

// Config is one generation experiment on built models.
type Config struct {
	Pair sim.Pair
	// Heads are the drafter heads' models (drafter heads only).
	Heads []sim.Model
	// Prompts are the contexts generation starts from.
	Prompts [][]int
	// Tokens is the number of new tokens per prompt.
	Tokens int
	// Drafter is tree (the tree drafter of the rule's kind: EAGLE-2's
	// dynamic tree for rules over top-k children) or a drafter of package
	// sim/draft by name (DrafterNames): chain, heads and lookup draft
	// chains for chain rules, the others trees for tree rules.
	Drafter string
	// Algo is a chain rule (chain drafters) or a tree rule (tree
	// drafters); Params its parameters.
	Algo   string
	Params algos.Params
	// Gamma is the draft length (the cap for conf and oracle; the depth
	// for trees); K the tree's branching (default draft.DefaultK); MaxNgram lookup's
	// max_ngram_size (default 3).
	Gamma, K, MaxNgram int
	Policy             draft.Policy
	// Cost is c, the draft's cost per forward pass, and VerifyCost v, the
	// extra cost per verified row beyond the first, both in units of one
	// target forward pass on one token.
	Cost, VerifyCost float64
	Seed             uint64
	Workers          int
	// Level and Power of the verdict (defaults check.DefaultLevel and
	// check.DefaultPower).
	Level, Power float64
	// Progress, if set, receives the emitted tokens so far.
	Progress func(done, total int64)
}

// PromptStats are one prompt's totals.
type PromptStats struct {
	Steps    int64   `json:"target_calls"`
	Emitted  int64   `json:"emitted"`
	Drafted  int64   `json:"drafted"`
	Accepted int64   `json:"accepted"`
	Cost     float64 `json:"cost"`
	// BetaSum and BetaN sum β over the examined draft positions.
	BetaSum float64 `json:"beta_sum"`
	BetaN   int64   `json:"beta_n"`
}

// Result reports a generation experiment.
type Result struct {
	Drafter string  `json:"drafter"`
	Algo    string  `json:"algo"`
	Gamma   int     `json:"gamma"`
	K       int     `json:"k,omitempty"`
	Policy  string  `json:"policy"`
	Prompts int     `json:"prompts"`
	Tokens  int     `json:"tokens"`
	Cost    float64 `json:"cost"`
	Verify  float64 `json:"verify_cost"`
	Seed    uint64  `json:"seed"`
	V       int     `json:"V"`
	// TargetCalls counts verification steps (target forward passes).
	TargetCalls int64 `json:"target_calls"`
	Emitted     int64 `json:"emitted"`
	Drafted     int64 `json:"drafted"`
	Accepted    int64 `json:"accepted"`
	// TokensPerCall is Emitted / TargetCalls (NaN, n/a, with no call:
	// an interrupt before the first step).
	TokensPerCall float64 `json:"tokens_per_target_call"`
	// TokensPerCallCI is a 95% normal interval over prompts (NaN with
	// no call).
	TokensPerCallCI [2]float64 `json:"tokens_per_target_call_ci95"`
	// Acceptance is Accepted / Drafted: the fraction of drafted tokens
	// kept (NaN when nothing was drafted).
	Acceptance float64 `json:"acceptance"`
	// MeanAcceptedLength is Accepted / TargetCalls: draft tokens kept per
	// step (the bonus or correction token not counted; NaN with no call).
	MeanAcceptedLength float64 `json:"mean_accepted_length"`
	// MeanBeta is the mean of β = Σ_x min(p(x), q(x)) over the examined
	// draft positions of chain blocks (Leviathan's α estimate); NaN (n/a)
	// for trees, which examine no chain positions.
	MeanBeta float64 `json:"mean_beta"`
	// Speedup is Emitted / Σ step costs (see the package comment); NaN
	// with no call.
	Speedup   float64    `json:"speedup"`
	SpeedupCI [2]float64 `json:"speedup_ci95"`
	Verdict   Verdict    `json:"verdict"`
	// PerPrompt holds each prompt's totals, in prompt order.
	PerPrompt       []PromptStats `json:"per_prompt"`
	Seconds         float64       `json:"seconds"`
	TokensPerSecond float64       `json:"tokens_per_second"`
	Workers         int           `json:"workers"`
	Interrupted     bool          `json:"interrupted"`
}

// Tree names the tree drafter of the rule's kind (Config.Drafter).
const Tree = "tree"

// Drafters lists the drafters the drafters experiment compares: chain,
// heads, lookup and tree (Config.Drafter takes any of DrafterNames).
func Drafters() []string { return []string{draft.ChainName, draft.HeadsName, draft.LookupName, Tree} }

// DrafterNames lists the values of Config.Drafter: tree, then the drafters
// of package sim/draft that draft from the pair (the chain drafters and
// the drawn tree drafters: all but fixed, whose candidates a generation
// has none to give).
func DrafterNames() []string {
	names := append([]string{Tree}, draft.ChainNames()...)
	names = append(names, draft.TreeNames()...)
	slices.Sort(names[1:])
	return names
}

// rule is the verifier of a generation: a chain or a tree rule.
type rule struct {
	chain  sim.Algorithm
	tree   sim.TreeAlgorithm
	greedy bool
}

// build returns the drafter and the rule of c: tree drafts with the
// rule's kind of tree, a named drafter with a rule of its shape.
func (c *Config) build() (draft.Drafter, rule, error) {
	var none draft.Drafter
	name := c.Drafter
	if name == Tree {
		e, err := algos.LookupTree(c.Algo)
		if err != nil {
			return none, rule{}, fmt.Errorf("drafter tree needs a tree rule: %w", err)
		}
		a, err := e.Build(c.Params)
		if err != nil {
			return none, rule{}, err
		}
		name = e.Draft.String()
		if e.Draft == sim.DraftTopK {
			name = draft.DynamicName
		}
		d, err := c.drafter(name)
		return d, rule{tree: a, greedy: e.Greedy}, err
	}
	if !slices.Contains(DrafterNames(), name) {
		return none, rule{}, fmt.Errorf("generate: unknown drafter %q; use one of %s", name, strings.Join(DrafterNames(), ", "))
	}
	d, err := c.drafter(name)
	if err != nil {
		return none, rule{}, err
	}
	if d.Tree != nil {
		e, err := algos.LookupTree(c.Algo)
		if err != nil {
			return none, rule{}, fmt.Errorf("drafter %s drafts trees and needs a tree rule: %w", name, err)
		}
		if err := algos.DrafterError(e, name, "drafter"); err != nil {
			return none, rule{}, err
		}
		a, err := e.Build(c.Params)
		return d, rule{tree: a, greedy: e.Greedy}, err
	}
	if algos.IsTree(c.Algo) {
		return none, rule{}, fmt.Errorf("algorithm %s is a tree rule; use drafter tree", c.Algo)
	}
	e, err := algos.Lookup(c.Algo)
	if err != nil {
		return none, rule{}, err
	}
	a, err := e.Build(c.Params)
	return d, rule{chain: a, greedy: e.Greedy}, err
}

// drafter builds the drafter of package sim/draft called name from c.
func (c *Config) drafter(name string) (draft.Drafter, error) {
	d, err := draft.New(draft.Config{Name: name, Q: c.Pair.Q, Heads: c.Heads, K: c.K, Depth: c.Gamma,
		MaxNgram: c.MaxNgram, Policy: c.Policy})
	if err != nil {
		return d, fmt.Errorf("generate: %w", err)
	}
	if d.Tree != nil && c.Policy.Kind != draft.PolicyFixed {
		return d, fmt.Errorf("generate: policy %s applies to chain drafters; trees use a fixed depth", c.Policy)
	}
	return d, nil
}

func (c *Config) check() error {
	if c.Pair.P == nil || c.Pair.Q == nil {
		return fmt.Errorf("generate: no model pair")
	}
	if c.Pair.P.Vocab() != c.Pair.Q.Vocab() {
		return fmt.Errorf("generate: target has %d tokens and draft %d; use one vocabulary", c.Pair.P.Vocab(), c.Pair.Q.Vocab())
	}
	c.K = draft.K(c.K, c.Drafter)
	if c.MaxNgram == 0 {
		c.MaxNgram = 3
	}
	if c.Level == 0 {
		c.Level = check.DefaultLevel
	}
	if c.Power == 0 {
		c.Power = check.DefaultPower
	}
	if c.Policy.Kind == "" {
		c.Policy.Kind = draft.PolicyFixed
	}
	switch {
	case len(c.Prompts) == 0:
		return fmt.Errorf("generate: no prompts; give at least one prompt")
	case c.Tokens < 1:
		return fmt.Errorf("generate: tokens = %d; generate at least 1 token per prompt", c.Tokens)
	case c.Gamma < 1 || c.Gamma > sim.MaxGamma:
		return fmt.Errorf("generate: gamma = %d; use 1 <= gamma <= %d", c.Gamma, sim.MaxGamma)
	case !(c.Cost >= 0) || !(c.VerifyCost >= 0):
		return fmt.Errorf("generate: cost = %g, verify cost = %g; costs must be >= 0", c.Cost, c.VerifyCost)
	case c.MaxNgram < 1:
		return fmt.Errorf("generate: max ngram = %d; use >= 1", c.MaxNgram)
	case !(c.Level > 0 && c.Level < 1) || !(c.Power > c.Level && c.Power < 1):
		return fmt.Errorf("generate: level = %g, power = %g; use 0 < level < power < 1", c.Level, c.Power)
	}
	for i, p := range c.Prompts {
		if len(p) == 0 {
			return fmt.Errorf("generate: prompt %d is empty", i)
		}
	}
	return nil
}

// worker is one goroutine's state.
type worker struct {
	cfg    *Config
	rule   rule
	loop   *run.Worker   // drafts with w's drafter, verifies with the rule
	chains *draft.Chains // the chain drafter after w.ctx (chain rules)
	trees  *draft.Trees  // the tree drafter after w.ctx (tree rules)
	depth  int           // the trees' depth: their draft passes
	// chainQ: the chain drafter's rows are the draft model's after the
	// emitted prefix (draft.Chain), so emit need not recompute them.
	chainQ  bool
	tally   *Tally
	ctx     []int
	end     int          // len(prompt) + cfg.Tokens: tokens from here on are not paired
	streams *run.Streams // the prompt's streams (unit = prompt index)
	qemit   []float64
	prow    []float64
	path    []int
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// Generate runs the generations of cfg: prompt i draws from the streams of
// unit i of run.Named("seq") (draft, coins, and the continuation stream
// for the tests' randomisation), so results do not depend on the worker
// count. Cancelling ctx stops early with Interrupted set.
func Generate(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.check(); err != nil {
		return Result{}, err
	}
	d0, r0, err := cfg.build()
	if err != nil {
		return Result{}, err
	}
	v := cfg.Pair.P.Vocab()
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(cfg.Prompts))
	res := Result{Drafter: cfg.Drafter, Algo: cfg.Algo, Gamma: cfg.Gamma, Policy: cfg.Policy.String(),
		Prompts: len(cfg.Prompts), Tokens: cfg.Tokens, Cost: cfg.Cost, Verify: cfg.VerifyCost, Seed: cfg.Seed, V: v,
		Workers: workers, PerPrompt: make([]PromptStats, len(cfg.Prompts))}
	if d0.Tree != nil {
		res.K = cfg.K
	}
	ws, err := newWorkers(&cfg, d0, r0, workers, v)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	runPrompts(ctx, &cfg, ws, res.PerPrompt)
	res.Seconds = time.Since(start).Seconds()
	res.Interrupted = ctx.Err() != nil
	tl := NewTally(v, r0.greedy)
	for _, w := range ws {
		tl.Merge(w.tally)
	}
	res.summarise()
	res.Verdict = tl.Verdict(cfg.Level, cfg.Power)
	return res, nil
}

// newWorkers builds the generation's workers: each its own tally and a
// round loop over d0's chain or tree drafter after its context, verified
// by r0.
func newWorkers(cfg *Config, d0 draft.Drafter, r0 rule, workers, v int) ([]*worker, error) {
	_, chainQ := d0.Chain.(*draft.Chain)
	ws := make([]*worker, workers)
	for i := range ws {
		w := &worker{cfg: cfg, rule: r0, chainQ: chainQ, tally: NewTally(v, r0.greedy)}
		l := &run.Loop{Seed: cfg.Seed, Keys: run.Named("seq"), Verifiers: []run.Verifier{{Chain: r0.chain, Tree: r0.tree}}}
		if d0.Tree != nil {
			w.trees, w.depth = draft.TreeRounds(d0.Tree, cfg.Pair.P, &w.ctx), d0.Tree.Depth()
			l.Trees = w.trees
		} else {
			w.chains = draft.ChainRounds(d0.Chain, cfg.Pair.P, cfg.Gamma, &w.ctx)
			l.Chains = w.chains
		}
		var err error
		if w.loop, err = l.NewWorker(); err != nil {
			return nil, err
		}
		w.streams = run.NewStreams(l.Seed, l.Keys)
		ws[i] = w
	}
	return ws, nil
}

// runPrompts generates the prompts on the workers' goroutines, each
// taking the next prompt (on the streams of its index) until none is left
// or ctx is cancelled, into per[i].
func runPrompts(ctx context.Context, cfg *Config, ws []*worker, per []PromptStats) {
	var next, done atomic.Int64
	total := int64(len(cfg.Prompts)) * int64(cfg.Tokens)
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cfg.Prompts) || ctx.Err() != nil {
					return
				}
				w.streams.Reset(uint64(i))
				per[i] = w.run(ctx, cfg.Prompts[i], &done)
				if cfg.Progress != nil {
					cfg.Progress(done.Load(), total)
				}
			}
		}()
	}
	wg.Wait()
}

// summarise sums the prompts' counts into res and sets its rates and
// their 95% intervals over prompts; a measure of nothing is NaN.
func (res *Result) summarise() {
	var beta float64
	var betaN int64
	var tpc, spd stattest.Moments
	var cost float64
	for _, p := range res.PerPrompt {
		res.TargetCalls += p.Steps
		res.Emitted += p.Emitted
		res.Drafted += p.Drafted
		res.Accepted += p.Accepted
		cost += p.Cost
		beta += p.BetaSum
		betaN += p.BetaN
		if p.Steps > 0 {
			tpc.Add(float64(p.Emitted) / float64(p.Steps))
			spd.Add(float64(p.Emitted) / p.Cost)
		}
	}
	// a measure of nothing is n/a (NaN), not 0
	nan := math.NaN()
	res.TokensPerCall, res.MeanAcceptedLength, res.Speedup, res.Acceptance, res.MeanBeta = nan, nan, nan, nan, nan
	res.TokensPerCallCI, res.SpeedupCI = [2]float64{nan, nan}, [2]float64{nan, nan}
	if res.TargetCalls > 0 {
		res.TokensPerCall = float64(res.Emitted) / float64(res.TargetCalls)
		res.MeanAcceptedLength = float64(res.Accepted) / float64(res.TargetCalls)
		res.Speedup = float64(res.Emitted) / cost
		s := tpc.Summary(0.95)
		res.TokensPerCallCI = [2]float64{s.Lo, s.Hi}
		s = spd.Summary(0.95)
		res.SpeedupCI = [2]float64{s.Lo, s.Hi}
	}
	if res.Drafted > 0 {
		res.Acceptance = float64(res.Accepted) / float64(res.Drafted)
	}
	if betaN > 0 {
		res.MeanBeta = beta / float64(betaN)
	}
	if res.Seconds > 0 {
		res.TokensPerSecond = float64(res.Emitted) / res.Seconds
	}
}

// run generates one prompt's tokens.
func (w *worker) run(ctx context.Context, prompt []int, done *atomic.Int64) PromptStats {
	cfg := w.cfg
	need := len(prompt) + cfg.Tokens + 2*sim.MaxGamma + 2
	if cap(w.ctx) < need {
		w.ctx = make([]int, 0, need)
	}
	w.ctx = append(w.ctx[:0], prompt...)
	w.tally.StartPrompt()
	var st PromptStats
	end := len(prompt) + cfg.Tokens
	w.end = end
	// A prompt's rounds draw in turn from its unit's streams: drafts from
	// the draft stream, the rule's coins from the coins stream, the
	// randomisation of the emitted tokens' tests from the continuation
	// stream.
	rng := w.streams.Rand(run.Continuation)
	for len(w.ctx) < end && ctx.Err() == nil {
		before := len(w.ctx)
		r, err := w.loop.Round(w.streams, st.Steps)
		if err != nil {
			panic("seq: " + err.Error()) // the drafters return no errors
		}
		if r.Tree != nil {
			w.treeStep(rng, r, &st)
		} else {
			w.chainStep(rng, r, &st)
		}
		done.Add(int64(len(w.ctx) - before))
	}
	// tokens past the requested length are still counted: they were
	// emitted by the last step and tested.
	return st
}

// chainStep accounts a verified chain round and tests its emitted tokens.
func (w *worker) chainStep(rng *rand.Rand, r *run.Round, st *PromptStats) {
	cfg := w.cfg
	b, o, passes := r.Block, r.Outcome(), w.chains.Passes()
	n := o.Accepted
	rows := len(b.P)
	if cfg.Policy.Kind == draft.PolicyOracle {
		// charged as if exactly the accepted draft had been proposed:
		// the drafter's passes for n tokens, n+1 verified rows.
		passes = w.chains.Drafter().Passes(n)
		rows = n + 1
	}
	st.Steps++
	st.Drafted += int64(len(b.Tokens))
	st.Accepted += int64(n)
	st.Cost += cfg.Cost*float64(passes) + 1 + cfg.VerifyCost*float64(rows-1)
	for i := 0; i <= n && i < len(b.Tokens); i++ {
		st.BetaSum += betaOf(w.chains.P(i), w.chains.Q(i))
		st.BetaN++
	}
	// the chain drafter's q_i is the draft model's row after the emitted
	// prefix for every kept position and the one after them.
	qOf := func(i int) []float64 {
		if w.chainQ && i < len(b.Tokens) {
			return w.chains.Q(i)
		}
		return nil
	}
	for i := 0; i < n; i++ {
		w.emit(rng, w.chains.P(i), qOf(i), b.Tokens[i])
	}
	if o.Next != sim.NoToken {
		w.emit(rng, w.chains.P(n), qOf(n), o.Next)
	}
	st.Emitted += int64(o.Emitted())
}

// treeStep accounts a verified tree round and tests its emitted tokens.
func (w *worker) treeStep(rng *rand.Rand, r *run.Round, st *PromptStats) {
	cfg := w.cfg
	t, o, passes := r.Tree, r.TreeOutcome(), w.depth
	w.path = t.Path(w.path[:0], o.Node)
	st.Steps++
	st.Drafted += int64(len(t.Nodes) - 1)
	st.Accepted += int64(len(w.path))
	st.Cost += cfg.Cost*float64(passes) + 1 + cfg.VerifyCost*float64(len(t.Nodes)-1)
	// the rows along the accepted path: node n's P is p(.|ctx, path(n)).
	n := o.Node
	var nodes [sim.MaxTreeDepth + 1]int
	d := t.Nodes[n].Depth
	for k := d; k >= 0; k-- {
		nodes[k] = n
		n = t.Nodes[n].Parent
	}
	for k := 0; k < d; k++ {
		w.emit(rng, w.rowOf(t.Nodes[nodes[k]].P), nil, w.path[k])
	}
	if o.Next != sim.NoToken {
		w.emit(rng, w.rowOf(t.Nodes[nodes[d]].P), nil, o.Next)
	}
	st.Emitted += int64(d)
	if o.Next != sim.NoToken {
		st.Emitted++
	}
}

// rowOf returns a copy of r's values in w's scratch row.
func (w *worker) rowOf(r sim.Row) []float64 {
	w.prow = r.Float64s(w.prow)
	return w.prow
}

// emit tests and appends one emitted token.
//
// q is the draft model's row after the same prefix when the caller has it
// (nil: it is computed here).
func (w *worker) emit(rng *rand.Rand, p, q []float64, x int) {
	if q == nil {
		w.qemit = grow(w.qemit, len(p))
		w.cfg.Pair.Q.Next(w.ctx, w.qemit)
		q = w.qemit
	}
	if len(w.ctx) == w.end {
		// the last step's tokens past the requested length exist or not
		// by what earlier tokens did: pairing them would select on it.
		w.tally.StopPairs()
	}
	w.tally.Add(rng.Float64(), p, q, x)
	w.ctx = append(w.ctx, x)
}

func betaOf(p, q []float64) float64 {
	s := 0.0
	for i, a := range p {
		s += min(a, q[i])
	}
	return s
}
