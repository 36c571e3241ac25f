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
	// nodes per layer for dynamic; 0 is 4) and Branch, if set, its
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
	pool, _ := sim.PoolOf(src.BlockSource)
	pair, isPair := sim.PairOf(src.BlockSource)
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
	rep := Report{Command: cfg.Command, ExternalMode: cfg.Mode, Batch: cfg.Check.Batch, Sampling: cfg.Sampling}
	rep.Source, rep.Gamma = src.Spec, cfg.Check.Gamma
	if cfg.Mode != Verify && cfg.Mode != Step && cfg.Mode != Tree {
		return rep, diag.Param("mode", " %q; use %q, %q or %q", cfg.Mode, Verify, Step, Tree)
	}
	var s *data.Sampling
	if cfg.Sampling != nil {
		s = &data.Sampling{Temperature: cfg.Sampling.Temperature, TopK: cfg.Sampling.TopK, TopP: cfg.Sampling.TopP, MinP: cfg.Sampling.MinP}
		if err := s.Validate(); err != nil {
			return rep, usage(err)
		}
	}
	switch {
	case s != nil && len(cfg.Rows) > 0:
		return rep, usage(fmt.Errorf("sampling parameters and a batch composition (rows) both given; give each row kind its own parameters in rows"))
	case (s != nil || len(cfg.Rows) > 0) && pool == nil:
		return rep, usage(fmt.Errorf("sampling parameters and batch compositions need a pool source (dirichlet:, temperature:, zipf:)"))
	case s != nil && cfg.Mode == Tree:
		return rep, usage(fmt.Errorf("sampling parameters apply to chain modes (verify, step), not to tree mode"))
	}
	checked := src
	switch {
	case pool != nil:
		cfg.Check.Gamma, cfg.Gamma, cfg.V, cfg.Source = pool.Gamma, pool.Gamma, pool.V, SourcePool
		switch {
		case s != nil:
			tp, err := TransformPool(pool, *s)
			if err != nil {
				return rep, usage(err)
			}
			checked = sim.Source{Spec: src.Spec, BlockSource: tp}
		case len(cfg.Rows) > 0:
			if err := checkRows(cfg.Rows, pool.Gamma, cfg.Mode == Tree); err != nil {
				return rep, usage(err)
			}
			need := sim.MulBytes(int64(pool.Contexts), int64(len(cfg.Rows)), int64(2*pool.Gamma+1), int64(pool.V), 4, 2)
			if err := sim.CheckMem(fmt.Sprintf("the composed pool (%d contexts × %d row kinds × %d rows × V = %d)", pool.Contexts, len(cfg.Rows), 2*pool.Gamma+1, pool.V), need, cfg.MemBudget, "use fewer contexts or row kinds"); err != nil {
				return rep, usage(err)
			}
			cp, err := ComposePool(pool, cfg.Rows)
			if err != nil {
				return rep, usage(err)
			}
			checked = sim.Source{Spec: src.Spec, BlockSource: cp}
			var kinds []string
			for _, r := range cfg.Rows {
				kinds = append(kinds, r.String())
			}
			rep.Rows, cfg.Check.RowKinds = strings.Join(kinds, ";"), kinds
			for _, r := range cfg.Rows {
				cfg.Check.KindGammas = append(cfg.Check.KindGammas, r.gammaOf(cfg.Gamma))
			}
			if err := kindMem(cfg, len(kinds)); err != nil {
				return rep, usage(err)
			}
		}
	case isPair:
		if err := pair.Check(); err != nil {
			return rep, usage(err)
		}
		cfg.Gamma, cfg.V, cfg.Source = cfg.Check.Gamma, pair.P.Vocab(), SourceInline
		if sim.MarkovOf(pair.P) != nil && sim.MarkovOf(pair.Q) != nil && cfg.Mode != Verify {
			cfg.Source = SourceMarkov
		}
		if cfg.Mode == Step && cfg.Source != SourceMarkov {
			return rep, usage(fmt.Errorf("step mode needs a pool source or a Markov model pair (markov:...), whose tables the harness ships; %s is neither", src.Spec))
		}
	default:
		return rep, usage(fmt.Errorf("empty source"))
	}
	rep.Gamma = cfg.Gamma
	rule := check.Rule{Name: "external"}
	var chainLaw sim.Lawer
	if cfg.Conform != "" {
		if cfg.Mode == Tree {
			lw, name, err := resolve.TreeLaw(cfg.Conform, cfg.ConformParams)
			if err != nil {
				return rep, usage(err)
			}
			rule.TreeLaw, rule.LawName = lw, name
		} else {
			lw, name, err := resolve.ChainLaw(cfg.Conform, cfg.ConformParams)
			if err != nil {
				return rep, usage(err)
			}
			rule.Law, rule.LawName, chainLaw = lw, name, lw
			if len(cfg.Rows) > 0 {
				cp, _ := sim.PoolOf(checked.BlockSource)
				off, note, err := conformKinds(cfg.Rows, cp, lw, name)
				if err != nil {
					return rep, usage(err)
				}
				cfg.Check.LawKindsOff = off
				if note != "" {
					rep.Notes = append(rep.Notes, note)
				}
			}
		}
		rule.Conform = true
	}
	if cfg.Mode == Tree {
		name, k, branch := cfg.TreeDraft, cfg.K, cfg.Branch
		if name == "" {
			name = sim.DraftIID.String()
		}
		if !slices.Contains(draft.TreeNames(), name) {
			return rep, diag.Param("draft", " %q; tree mode drafts with %s", name, strings.Join(draft.TreeNames(), ", "))
		}
		if k == 0 {
			k = 4
		}
		if len(branch) > 0 {
			cfg.Check.Gamma, cfg.Gamma = len(branch), len(branch)
			rep.Gamma = cfg.Gamma
		}
		if cfg.Gamma < 1 || cfg.Gamma > sim.MaxTreeDepth {
			return rep, diag.Param("gamma", " = %d; use a tree depth of 1..%d", cfg.Gamma, sim.MaxTreeDepth)
		}
		// the harness's own batch of drafted trees, before the
		// implementation starts (check reserves it again, with its tallies)
		nodes := MaxTreeNodes(name, k, cfg.Gamma, branch)
		need := check.TreeBatchBytes(int64(cfg.Check.Batch), int64(nodes), k, cfg.V)
		if err := sim.CheckMem(fmt.Sprintf("a batch of %d draft trees of up to %d nodes × V = %d in the harness", cfg.Check.Batch, nodes, cfg.V), need, cfg.MemBudget, check.TreeBatchFix); err != nil {
			return rep, usage(err)
		}
		if cfg.Source == SourceInline {
			if err := sim.CheckMem(treeWhat(cfg.Check.Batch, nodes, cfg.V), TreeBytes(cfg.Check.Batch, nodes, cfg.V), cfg.MemBudget, "lower the batch size"); err != nil {
				return rep, usage(err)
			}
		}
		rule.K, rule.Branch, cfg.Draft, rep.K, rep.Draft = k, branch, name, k, name
		rule.Drafter = func(q sim.Model, depth int) (sim.Drafter, error) {
			return treeDrafter(name, q, k, depth, branch)
		}
		if _, err := rule.Drafter(uniform(cfg.V), cfg.Gamma); err != nil {
			return rep, usage(err)
		}
		if rows := cfg.Rows; len(rows) > 0 {
			rule.DrafterAt = func(c int, q sim.Model, depth int) (sim.Drafter, error) {
				kr := rows[c%len(rows)]
				return treeDrafter(name, q, k, kr.gammaOf(depth), kr.branchOf(branch, depth))
			}
			for i, kr := range rows {
				if _, err := rule.DrafterAt(i, uniform(cfg.V), cfg.Gamma); err != nil {
					return rep, usage(fmt.Errorf("rows: kind %d (%s): %v", i+1, kr, err))
				}
			}
		}
	}
	im, err := StartContext(ctx, cfg.Config)
	if err != nil {
		return rep, err
	}
	defer im.Kill()
	im.needDrafts = cfg.Conform != "" && cfg.Mode == Step
	rep.Implementation, rep.Algorithm, rep.Protocol = im.Name(), im.Name(), im.Protocol()
	rule.Name = im.Name()
	if cfg.Mode == Tree {
		rule.TreeSteps = im
	} else {
		rule.Steps = im
	}
	switch {
	case pool != nil:
		if err := im.SetPool(pool); err != nil {
			return rep, err
		}
	case cfg.Source == SourceMarkov:
		if err := im.SetModel(pair); err != nil {
			return rep, err
		}
	}
	start := time.Now()
	if cfg.Mode != Tree && !rule.Conform {
		// rank the harness's chain rules by how well their laws explain
		// the outcomes: a violation's likely bug, a clean check's rule
		cfg.Check.Candidates, cfg.Check.Bugs = resolve.Candidates(), resolve.Suspects()
	}
	res, err := check.Check(ctx, checked, rule, cfg.Check)
	rep.Elapsed = time.Since(start).Seconds()
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
		case res.Verdict == "" && ctx.Err() == nil:
			return rep, usage(err) // refused by check before any step
		}
		return rep, err
	}
	if c, ok := im.invalid.component(); ok {
		rep.AddComponent(c)
	}
	if !res.Interrupted && cfg.Mode != Tree {
		// The edge cases enter the verdict as check's do for Go rules:
		// a failure makes it violated whatever the tests said; cases
		// whose scripted coins were not used are not_exercised.
		verdict, msg, note, err := im.Edge(s, chainLaw)
		if err != nil {
			return rep, fmt.Errorf("%v (edge-case batch)", err)
		}
		rep.SetEdge(verdict, msg)
		if note != "" {
			rep.Notes = append(rep.Notes, note)
		}
	}
	if !res.Interrupted {
		c, ok, err := im.Determinism()
		if err != nil {
			return rep, err
		}
		if ok {
			rep.AddComponent(c)
		}
	}
	if c, ok := im.broken.component(im.Sent()); ok {
		rep.AddComponent(c)
	}
	if err := im.Close(); err != nil && !(res.Interrupted && errors.Is(err, context.Canceled)) {
		// every answer is in and judged: what went wrong at the close
		// is a note beside the verdict, never its loss
		rep.Notes = append(rep.Notes, err.Error()+" (the verdict above is from its answers, all received before the close)")
	}
	return rep, nil
}

// treeDrafter builds tree mode's drafter name over q (k candidates,
// depth, branching branch).
func treeDrafter(name string, q sim.Model, k, depth int, branch []int) (sim.Drafter, error) {
	d, err := draft.New(draft.Config{Name: name, Q: q, K: k, Depth: depth, Branch: branch})
	if err == nil && d.Tree == nil {
		err = fmt.Errorf("drafter %s drafts chains, not trees; use iid, wor, topk, greedy or dynamic", name)
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
