package external

import (
	"context"
	"errors"
	"fmt"
	"github.com/specsim/specsim/algos"
	"slices"
	"strings"
	"time"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
)

// DefaultBatch is the default batch size B (steps per round trip).
const DefaultBatch = 1024

// RunConfig is a whole external check: the implementation and the
// statistical check's settings. Check.Batch is the protocol's batch size
// B (DefaultBatch when 0); Check.Workers is ignored (one process answers
// one batch at a time, so the check runs on one worker). In tree mode
// Check.Gamma is the trees' depth.
type RunConfig struct {
	Config
	Check check.Config
	// Conform names a rule whose exact conditional law the steps are
	// tested against ("implements rule R", check.Rule.Conform): a chain
	// rule in verify and step mode, a tree rule in tree mode; "" runs the
	// losslessness check.
	Conform string
	// ConformParams are the parameters of the Conform rule when Conform
	// gives none ("NAME:k=v" gives them itself); nil: its defaults.
	ConformParams algos.Params
	// TreeDraft names the drafter of tree mode (iid, wor, topk, greedy or
	// dynamic; "" is iid), K its candidates (children of the root, or
	// nodes per layer for dynamic; 0 is draft.DefaultK) and Branch, if set, its
	// children per depth (wor, topk, greedy).
	TreeDraft string
	K         int
	Branch    []int
}

// Report is check's report for the implementation (Algorithm is its
// name; Verdict folds in the edge cases as check does for Go rules, and
// the components: invalid outcomes and determinism) with the external
// run's facts.
type Report struct {
	resolve.Report
	Implementation string `json:"implementation"`
	Command        string `json:"command"`
	// ExternalMode is Verify, Step or Tree (Mode is check's: lossless or
	// conform:R).
	ExternalMode string `json:"external_mode"`
	// Protocol is the protocol version the implementation speaks.
	Protocol int       `json:"protocol"`
	Batch    int       `json:"batch"`
	Sampling *Sampling `json:"sampling,omitempty"`
	// Rows is the batch composition (ParseRows), if any.
	Rows string `json:"rows,omitempty"`
	// Elapsed is the check's wall-clock time, the implementation's start
	// and the edge cases excluded (a --seconds budget's pilot included).
	Elapsed float64 `json:"elapsed_seconds"`
	// StepsPerSecond is the steps the implementation answered in Elapsed.
	StepsPerSecond float64 `json:"steps_per_second"`
}

// usage marks a configuration the harness refuses before starting
// anything (bad mode, command, source or sampling parameters) as a usage
// error (diag.ErrUsage).
func usage(err error) error { return diag.Usage(err) }

// Run starts the implementation, checks it with check.Check on src, runs
// the edge cases (Edge; chain modes) and the determinism replay (composed
// batches with seeded rows), and stops it. Sources: a pool (rows sent
// once, batches carry context indices) in every mode; a model pair in
// verify mode (rows sent with every batch) and, as a Markov pair, in step
// and tree mode (its tables sent once: the implementation drafts from
// them in step mode, tree batches carry every node's state). With
// sampling parameters (or a batch composition, Config.Rows) the check's
// source is the transformed pool (TransformPool, ComposePool) while the
// implementation holds the raw rows; they share their context indices.
// Errors of the implementation (crash, timeout, malformed output) come
// back as one-line errors naming the batch and step; the child is killed
// before Run returns. Answers that are well formed but that no correct
// sampler gives are invalid outcomes: counted, shown in the "outcomes"
// component, and a violation.
func Run(ctx context.Context, src sim.Source, cfg RunConfig) (Report, error) {
	p, err := prepare(src, cfg)
	if err != nil {
		return p.rep, err
	}
	im, err := p.start(ctx)
	if err != nil {
		return p.rep, err
	}
	defer im.Kill()
	start := time.Now()
	res, err := check.Check(ctx, p.checked, p.rule, p.cfg.Check)
	rep, err := p.report(im, res, err, time.Since(start), ctx.Err() == nil)
	if err != nil {
		return rep, err
	}
	comps, err := p.components(im, res.Interrupted)
	if err != nil {
		return rep, err
	}
	comps.apply(&rep)
	if err := im.Close(); err != nil && !(res.Interrupted && errors.Is(err, context.Canceled)) {
		// every answer is in and judged: what went wrong at the close
		// is a note beside the verdict, never its loss
		rep.Notes = append(rep.Notes, err.Error()+" (the verdict above is from its answers, all received before the close)")
	}
	return rep, nil
}

// prepared is an external check built up to its implementation's start:
// the configuration completed from the source, the report's description,
// the source the check tallies (the transformed or composed pool where
// sampling parameters or rows ask for one) and the rule.
type prepared struct {
	cfg      RunConfig
	rep      Report
	src      sim.Source
	checked  sim.Source
	rule     check.Rule
	chainLaw sim.Lawer
	sampling *data.Sampling
}

// prepare checks cfg against src and builds the check's source and rule
// (prepareSource, prepareConform, prepareTree); every error is one the
// harness refuses before starting anything.
func prepare(src sim.Source, cfg RunConfig) (*prepared, error) {
	if cfg.Check.Batch == 0 {
		cfg.Check.Batch = DefaultBatch
	}
	cfg.Check.Workers = 1
	if cfg.Check.MemBudget == 0 {
		cfg.Check.MemBudget = cfg.MemBudget // the check's tallies and tree batches
	}
	// An implementation decides a whole batch in one call, so its rows may
	// share randomness that keeps every row's law exact: always test that
	// rows are independent (with batches of two rows or more).
	cfg.Check.CrossRow = true
	p := &prepared{src: src, checked: src, rule: check.Rule{Name: "external"},
		rep: Report{Command: cfg.Command, ExternalMode: cfg.Mode, Batch: cfg.Check.Batch, Sampling: cfg.Sampling}}
	p.rep.Source, p.rep.Gamma = src.Spec, cfg.Check.Gamma
	if cfg.Mode != Verify && cfg.Mode != Step && cfg.Mode != Tree {
		return p, diag.Param("mode", " %q; use %q, %q or %q", cfg.Mode, Verify, Step, Tree)
	}
	if cfg.Sampling != nil {
		p.sampling = &data.Sampling{Temperature: cfg.Sampling.Temperature, TopK: cfg.Sampling.TopK, TopP: cfg.Sampling.TopP, MinP: cfg.Sampling.MinP}
		if err := p.sampling.Validate(); err != nil {
			return p, usage(err)
		}
	}
	pool, _ := sim.PoolOf(src.BlockSource)
	switch s := p.sampling; {
	case s != nil && len(cfg.Rows) > 0:
		return p, usage(fmt.Errorf("sampling parameters and a batch composition (rows) both given; give each row kind its own parameters in rows"))
	case (s != nil || len(cfg.Rows) > 0) && pool == nil:
		return p, usage(fmt.Errorf("sampling parameters and batch compositions need a pool source (dirichlet:, temperature:, zipf:)"))
	case s != nil && cfg.Mode == Tree:
		return p, usage(fmt.Errorf("sampling parameters apply to chain modes (verify, step), not to tree mode"))
	}
	// γ is the branching's length (tree mode), else the pool's, else
	// --gamma: check.DraftLength owns that rule
	var branch []int
	if cfg.Mode == Tree {
		branch = cfg.Branch
	}
	cfg.Gamma = check.DraftLength(src.BlockSource, cfg.Check.Gamma, branch)
	cfg.Check.Gamma, p.rep.Gamma = cfg.Gamma, cfg.Gamma
	p.cfg = cfg
	if err := p.prepareSource(); err != nil {
		return p, err
	}
	if err := p.prepareConform(); err != nil {
		return p, err
	}
	if p.cfg.Mode == Tree {
		if err := p.prepareTree(); err != nil {
			return p, err
		}
	}
	return p, nil
}

// prepareSource completes the configuration from the source (a pool, with
// its transformed or composed copy; a model pair) and refuses what the
// source cannot serve.
func (p *prepared) prepareSource() error {
	cfg := &p.cfg
	pool, _ := sim.PoolOf(p.src.BlockSource)
	pair, isPair := sim.PairOf(p.src.BlockSource)
	switch {
	case pool != nil:
		cfg.V, cfg.Source = pool.V, SourcePool
		switch {
		case p.sampling != nil:
			tp, err := TransformPool(pool, *p.sampling)
			if err != nil {
				return usage(err)
			}
			p.checked = sim.Source{Spec: p.src.Spec, BlockSource: tp}
		case len(cfg.Rows) > 0:
			return p.composeRows(pool)
		}
	case isPair:
		if err := pair.Check(); err != nil {
			return usage(err)
		}
		cfg.V, cfg.Source = pair.P.Vocab(), SourceInline
		if sim.MarkovOf(pair.P) != nil && sim.MarkovOf(pair.Q) != nil && cfg.Mode != Verify {
			cfg.Source = SourceMarkov
		}
		if cfg.Mode == Step && cfg.Source != SourceMarkov {
			return usage(fmt.Errorf("step mode needs a pool source or a Markov model pair (markov:...), whose tables the harness ships; %s is neither", p.src.Spec))
		}
	default:
		return usage(fmt.Errorf("empty source"))
	}
	return nil
}

// composeRows builds the composed pool of cfg.Rows' row kinds and their
// check configuration.
func (p *prepared) composeRows(pool *sim.Pool) error {
	cfg := &p.cfg
	if err := checkRows(cfg.Rows, pool.Gamma, cfg.Mode == Tree); err != nil {
		return usage(err)
	}
	need := sim.MulBytes(int64(pool.Contexts), int64(len(cfg.Rows)), int64(2*pool.Gamma+1), int64(pool.V), 4, 2)
	if err := sim.CheckMem(fmt.Sprintf("the composed pool (%d contexts × %d row kinds × %d rows × V = %d)", pool.Contexts, len(cfg.Rows), 2*pool.Gamma+1, pool.V), need, cfg.MemBudget, "use fewer contexts or row kinds"); err != nil {
		return usage(err)
	}
	cp, err := ComposePool(pool, cfg.Rows)
	if err != nil {
		return usage(err)
	}
	p.checked = sim.Source{Spec: p.src.Spec, BlockSource: cp}
	var kinds []string
	for _, r := range cfg.Rows {
		kinds = append(kinds, r.String())
	}
	p.rep.Rows, cfg.Check.RowKinds = strings.Join(kinds, ";"), kinds
	for _, r := range cfg.Rows {
		cfg.Check.KindGammas = append(cfg.Check.KindGammas, r.gammaOf(cfg.Gamma))
	}
	if err := kindMem(*cfg, len(kinds)); err != nil {
		return usage(err)
	}
	return nil
}

// prepareConform puts the law of the --conform rule on the rule.
func (p *prepared) prepareConform() error {
	cfg := &p.cfg
	if cfg.Conform == "" {
		return nil
	}
	if cfg.Mode == Tree {
		lw, name, err := resolve.TreeLaw(cfg.Conform, cfg.ConformParams)
		if err != nil {
			return usage(err)
		}
		if err := conformDrafter(cfg.Conform, cfg.TreeDraft); err != nil {
			return usage(err)
		}
		p.rule.TreeLaw, p.rule.LawName = lw, name
	} else {
		lw, name, err := resolve.ChainLaw(cfg.Conform, cfg.ConformParams)
		if err != nil {
			return usage(err)
		}
		p.rule.Law, p.rule.LawName, p.chainLaw = lw, name, lw
		if len(cfg.Rows) > 0 {
			cp, _ := sim.PoolOf(p.checked.BlockSource)
			off, note, err := conformKinds(cfg.Rows, cp, lw, name)
			if err != nil {
				return usage(err)
			}
			cfg.Check.LawKindsOff = off
			if note != "" {
				p.rep.Notes = append(p.rep.Notes, note)
			}
		}
	}
	p.rule.Conform = true
	return nil
}

// conformDrafter refuses a --conform tree rule whose law is not defined
// on the trees of the drafter name ("": i.i.d.), algos.DrafterError.
func conformDrafter(spec, name string) error {
	if name == "" {
		name = sim.DraftIID.String()
	}
	rule, _, err := algos.ParseSpec(spec)
	if err != nil {
		return err
	}
	e, err := algos.LookupTree(rule)
	if err != nil {
		return err
	}
	return algos.DrafterError(e, name, "draft")
}

// prepareTree builds tree mode's drafter, refusing a batch of trees that
// would not fit the memory budget.
func (p *prepared) prepareTree() error {
	cfg := &p.cfg
	name, k, branch := cfg.TreeDraft, cfg.K, cfg.Branch
	if name == "" {
		name = sim.DraftIID.String()
	}
	if !slices.Contains(draft.TreeNames(), name) {
		return diag.Param("draft", " %q; tree mode drafts with %s", name, strings.Join(draft.TreeNames(), ", "))
	}
	k = draft.K(k, name)
	if cfg.Gamma < 1 || cfg.Gamma > sim.MaxTreeDepth {
		return diag.Param("gamma", " = %d; use a tree depth of 1..%d", cfg.Gamma, sim.MaxTreeDepth)
	}
	// the harness's own batch of drafted trees, before the
	// implementation starts (check reserves it again, with its tallies)
	nodes := MaxTreeNodes(name, k, cfg.Gamma, branch)
	need := check.TreeBatchBytes(int64(cfg.Check.Batch), int64(nodes), k, cfg.V)
	if err := sim.CheckMem(fmt.Sprintf("a batch of %d draft trees of up to %d nodes × V = %d in the harness", cfg.Check.Batch, nodes, cfg.V), need, cfg.MemBudget, check.TreeBatchFix); err != nil {
		return usage(err)
	}
	if cfg.Source == SourceInline {
		if err := sim.CheckMem(treeWhat(cfg.Check.Batch, nodes, cfg.V), TreeBytes(cfg.Check.Batch, nodes, cfg.V), cfg.MemBudget, "lower the batch size"); err != nil {
			return usage(err)
		}
	}
	p.rule.K, p.rule.Branch, cfg.Draft, p.rep.K, p.rep.Draft = k, branch, name, k, name
	p.rule.Drafter = func(q sim.Model, depth int) (sim.Drafter, error) {
		return treeDrafter(name, q, k, depth, branch)
	}
	if _, err := p.rule.Drafter(uniform(cfg.V), cfg.Gamma); err != nil {
		return usage(err)
	}
	if rows := cfg.Rows; len(rows) > 0 {
		p.rule.DrafterAt = func(c int, q sim.Model, depth int) (sim.Drafter, error) {
			kr := rows[c%len(rows)]
			return treeDrafter(name, q, k, kr.gammaOf(depth), kr.branchOf(branch, depth))
		}
		for i, kr := range rows {
			if _, err := p.rule.DrafterAt(i, uniform(cfg.V), cfg.Gamma); err != nil {
				return usage(fmt.Errorf("rows: kind %d (%s): %v", i+1, kr, err))
			}
		}
	}
	return nil
}

// start starts the implementation, hands it the pool or model it keeps,
// and makes it the rule's stepper; the caller kills it.
func (p *prepared) start(ctx context.Context) (*Impl, error) {
	im, err := StartContext(ctx, p.cfg.Config)
	if err != nil {
		return nil, err
	}
	im.needDrafts = p.cfg.Conform != "" && p.cfg.Mode == Step
	p.rep.Implementation, p.rep.Algorithm, p.rep.Protocol = im.Name(), im.Name(), im.Protocol()
	p.setStepper(im, im.Name())
	pool, _ := sim.PoolOf(p.src.BlockSource)
	pair, _ := sim.PairOf(p.src.BlockSource)
	switch {
	case pool != nil:
		err = im.SetPool(pool)
	case p.cfg.Source == SourceMarkov:
		err = im.SetModel(pair)
	}
	if err != nil {
		im.Kill()
		return nil, err
	}
	return im, nil
}

// setStepper makes st, named name, the rule's stepper and, for chain
// modes (losslessness and conformance checks alike, as in-process),
// ranks the harness's rules and the bug catalogue by how well their laws
// explain the outcomes given the drafts sent (a violation's likely bug,
// a clean check's rule); in tree mode, the bugs shown by the rows tests.
func (p *prepared) setStepper(st stepper, name string) {
	p.rule.Name = name
	if p.cfg.Mode == Tree {
		p.rule.TreeSteps = st
	} else {
		p.rule.Steps = st
	}
	if p.cfg.Mode != Tree {
		p.cfg.Check.Candidates, p.cfg.Check.Bugs = resolve.Candidates(), resolve.Suspects()
	} else {
		p.cfg.Check.Bugs = resolve.RowSuspects() // trees score no law; the rows tests still show a bug
	}
}

// report is the report of the check's result res and error err, which
// ran elapsed with im: the implementation's own error where it failed, a
// usage error where check refused the configuration before any step
// (live: the context was not cancelled).
func (p *prepared) report(im *Impl, res check.Result, err error, elapsed time.Duration, live bool) (Report, error) {
	rep := p.rep
	rep.Elapsed = elapsed.Seconds()
	rep.Result = res
	if rep.Elapsed > 0 {
		rep.StepsPerSecond = float64(im.Sent()) / rep.Elapsed
	}
	if err != nil {
		switch {
		case im.err != nil:
			// The implementation's own error already names the batch and
			// step; check's wrapping would repeat them.
			return rep, im.err
		case res.Verdict == "" && live:
			return rep, usage(err) // refused by check before any step
		}
		return rep, err
	}
	return rep, nil
}

// stepper answers chain and tree batches: the implementation, or a
// merge's stand-in that runs no step.
type stepper interface {
	check.Stepper
	sim.TreeStepper
}

// Components are what an external check finds beside its tests: the
// invalid outcomes and broken contracts (with examples), the edge cases
// (chain modes) and the determinism replay. A shard of a sharded check
// keeps its own in its state file; the merge applies every shard's.
type Components struct {
	// Edge, EdgeMsg and Note are the edge cases' verdict, message and
	// note ("" where they did not run: tree mode, an interrupted run).
	Edge    string            `json:"edge,omitempty"`
	EdgeMsg string            `json:"edge_message,omitempty"`
	Note    string            `json:"edge_note,omitempty"`
	List    []check.Component `json:"components,omitempty"`
}

// components runs the edge cases and the determinism replay of im (not
// after an interrupt) and collects the invalid outcomes' and broken
// contracts' components.
func (p *prepared) components(im *Impl, interrupted bool) (Components, error) {
	var c Components
	if comp, ok := im.invalid.component(); ok {
		c.List = append(c.List, comp)
	}
	if !interrupted && p.cfg.Mode != Tree {
		// The edge cases enter the verdict as check's do for Go rules:
		// a failure makes it violated whatever the tests said; cases
		// whose scripted coins were not used are not_exercised.
		verdict, msg, note, err := im.Edge(p.sampling, p.chainLaw)
		if err != nil {
			return c, fmt.Errorf("%v (edge-case batch)", err)
		}
		c.Edge, c.EdgeMsg, c.Note = verdict, msg, note
	}
	if !interrupted {
		comp, ok, err := im.Determinism()
		if err != nil {
			return c, err
		}
		if ok {
			c.List = append(c.List, comp)
		}
	}
	if comp, ok := im.broken.component(im.Sent()); ok {
		c.List = append(c.List, comp)
	}
	return c, nil
}

// apply puts c's edge cases and components on rep, in the order Run
// reports them: the edge cases first, then the components.
func (c Components) apply(rep *Report) {
	if c.Edge != "" {
		rep.SetEdge(c.Edge, c.EdgeMsg)
		if c.Note != "" {
			rep.Notes = append(rep.Notes, c.Note)
		}
	}
	for _, comp := range c.List {
		rep.AddComponent(comp)
	}
}

// treeDrafter builds tree mode's drafter name over q (k candidates,
// depth, branching branch).
func treeDrafter(name string, q sim.Model, k, depth int, branch []int) (sim.Drafter, error) {
	d, err := draft.New(draft.Config{Name: name, Q: q, K: k, Depth: depth, Branch: branch})
	if err == nil && d.Tree == nil {
		err = fmt.Errorf("drafter %s drafts chains, not trees; use %s", name, strings.Join(draft.TreeNames(), ", "))
	}
	return d.Tree, err
}

// kindMem refuses per-row-kind reports whose counts (check.KindBytes)
// would not fit the memory budget.
func kindMem(cfg RunConfig, kinds int) error {
	trials := max(cfg.Check.Trials, 1<<20)
	need := check.KindBytes(cfg.Gamma, trials, kinds, 1)
	return sim.CheckMem(fmt.Sprintf("the per-row-kind test counts (%d row kinds)", kinds), need, cfg.MemBudget, "use fewer row kinds")
}

// uniform is the uniform model over its value's tokens (Run builds the
// tree drafter once on it to refuse bad drafter settings before starting
// anything).
type uniform int

func (u uniform) Vocab() int { return int(u) }

func (u uniform) Next(_ []int, dst []float64) {
	for i := range dst {
		dst[i] = 1 / float64(u)
	}
}
