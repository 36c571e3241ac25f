package resolve

import (
	"context"
	"fmt"
	"strings"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/source"
)

// Request is a check named the way the command line names it.
type Request struct {
	// Algo is a chain or tree rule of the algos registry, Params its
	// parameters.
	Algo   string
	Params algos.Params
	// Source is a source spec of any registered kind (package
	// sim/source), or Pair a fixed pair given instead.
	Source string
	Pair   *sim.Pair
	// MemBudget is the most bytes the source may take (0:
	// sim.DefaultMemBudget).
	MemBudget int64
	// K, Draft ("" for the rule's own kind) and Branch configure the
	// drafter of tree rules.
	K      int
	Draft  string
	Branch []int
	// Delay is the single path of a delayed draft (draft.Config.Delay).
	Delay int
	// Conform names the rule whose exact conditional law the steps are
	// tested against ("" runs the losslessness check).
	Conform string
	// LawTest runs the sampler-vs-law test on pools of any V; by default
	// it is left out above LawTestAutoMaxV, where its per-step cost (the
	// rule's law, O(γV)) dominates the check.
	LawTest bool
	// SkipLaw leaves out the sampler-vs-law test (the lossless check then
	// tests the target law only; faster where the rule's law costs more
	// than its step).
	SkipLaw bool
	check.Config
}

// Report is a check's result with what was checked.
type Report struct {
	Algorithm string             `json:"algorithm"`
	Params    map[string]float64 `json:"params"`
	Source    string             `json:"source"`
	Gamma     int                `json:"gamma"`
	K         int                `json:"k,omitempty"`
	Draft     string             `json:"draft,omitempty"`
	// Notes say what the check left out and why.
	Notes []string `json:"notes,omitempty"`
	check.Result
}

// LawTestAutoMaxV is the largest pool vocabulary on which Run includes
// the sampler-vs-law test unless Request.LawTest asks for it.
const LawTestAutoMaxV = 4096

// ParseConform splits a conformance reference "NAME" or
// "NAME:k=v,k=v" into the rule's name and the parameters it gives (nil
// when it gives none), with algos.ParseSpec's syntax.
func ParseConform(spec string) (string, algos.Params, error) {
	name, ps, err := algos.ParseSpec(spec)
	if err != nil {
		return "", nil, diag.Param("conform", " %v", err)
	}
	return name, ps, nil
}

// ChainLaw returns the exact law of the chain rule that spec names ("NAME"
// or "NAME:k=v,..."), built with the parameters spec gives, else with
// params (nil: the rule's defaults), and the rule's name with its resolved
// parameters ("lenience(l=0.3)"): the law a conformance test
// (check.Rule.Conform) compares steps with.
func ChainLaw(spec string, params algos.Params) (sim.Lawer, string, error) {
	return law[sim.Algorithm, sim.Lawer](algos.Lookup, spec, params, "rule")
}

// TreeLaw is ChainLaw for tree rules.
func TreeLaw(spec string, params algos.Params) (sim.TreeLawer, string, error) {
	return law[sim.TreeAlgorithm, sim.TreeLawer](algos.LookupTree, spec, params, "tree rule")
}

// law parses spec, looks its rule up, builds it with spec's parameters or
// else params, and returns it as its law L with its display name; kind
// names the rule in the error when it has none.
func law[A, L any](lookup func(string) (algos.Rule[A], error), spec string, params algos.Params, kind string) (L, string, error) {
	var none L
	name, given, err := ParseConform(spec)
	if err != nil {
		return none, "", err
	}
	if given != nil {
		params = given
	}
	e, err := lookup(name)
	if err != nil {
		return none, "", err
	}
	a, full, err := build(e, params)
	if err != nil {
		return none, "", err
	}
	lw, ok := any(a).(L)
	if !ok {
		return none, "", fmt.Errorf("conform: %s %s has no exact law", kind, e.Name)
	}
	display := e.Name
	if len(full) > 0 {
		display += "(" + full.String() + ")"
	}
	return lw, display, nil
}

// build resolves the rule's parameters (the given ones and defaults) and
// constructs it.
func build[A any](e algos.Rule[A], given algos.Params) (A, algos.Params, error) {
	full, err := e.Resolve(given)
	if err != nil {
		var none A
		return none, nil, err
	}
	a, err := e.New(full)
	return a, full, err
}

// Prepared is a check a Request names, built: the source, the rule and
// the configuration check.Check (or check.CheckState and check.Merge, for
// a sharded check) runs, and the report's description of them.
type Prepared struct {
	Src  sim.Source
	Rule check.Rule
	Cfg  check.Config
	// Rep describes the check (rule, parameters, source, γ, drafter,
	// notes); its Result is filled by Finish.
	Rep Report
}

// Run builds the rule, the source and (with Conform) the law a Request
// names and runs Check. Errors in the Request (unknown names, bad
// parameters or sources) are usage errors (diag.ErrUsage); other errors
// are internal, or the context's when it was cancelled.
func Run(ctx context.Context, req Request) (Report, error) {
	p, err := Prepare(ctx, req)
	if err != nil {
		return p.Rep, err
	}
	res, err := check.Check(ctx, p.Src, p.Rule, p.Cfg)
	return p.Finish(ctx, res, err)
}

// Finish is the report of p's check, whose result is res and error err
// (check.Check's or check.Merge's): an error of a check that ran no trial
// and was not cancelled is a usage error (check refused its
// configuration).
func (p Prepared) Finish(ctx context.Context, res check.Result, err error) (Report, error) {
	rep := p.Rep
	rep.Result = res
	if err != nil && ctx.Err() == nil && res.Verdict == "" {
		return rep, diag.Usage(err)
	}
	return rep, err
}

// Prepare builds what Run runs: the rule (ruleOf), with Conform's law in
// place of its own, the configuration and the source. Its errors are
// Run's.
func Prepare(ctx context.Context, req Request) (Prepared, error) {
	p := Prepared{Rep: Report{Algorithm: req.Algo}}
	rule, greedy, batched, err := ruleOf(req, &p.Rep)
	if err != nil {
		return p, diag.Usage(err)
	}
	if req.SkipLaw && !rule.Conform {
		rule.Law, rule.TreeLaw = nil, nil
	}
	cfg := req.Config
	if cfg.MemBudget == 0 {
		cfg.MemBudget = req.MemBudget // one budget: the source's and the check's storage
	}
	cfg.Greedy = greedy
	cfg.CrossRow = cfg.CrossRow || batched
	if rule.Tree == nil && rule.TreeSteps == nil && cfg.Candidates == nil {
		// rank the chain rules and the bug catalogue by how well their
		// laws explain the outcomes: the bug a violation resembles
		cfg.Candidates, cfg.Bugs = Candidates(), Suspects()
	} else if cfg.CrossRow && cfg.Bugs == nil {
		// a tree rule checked in batches: the bugs the rows tests show
		cfg.Bugs = RowSuspects()
	}
	// the source is built at the configured γ (the branching's length
	// where one is given); the check runs at the γ of the source built
	gamma := check.DraftLength(nil, cfg.Gamma, req.Branch)
	src, err := sourceOf(ctx, req, rule, cfg, gamma)
	if err != nil {
		return p, err
	}
	cfg.Gamma = check.DraftLength(src.BlockSource, gamma, req.Branch)
	p.Rep.Source, p.Rep.Gamma = src.Spec, cfg.Gamma
	if pool, ok := sim.PoolOf(src.BlockSource); ok && !req.LawTest && !rule.Conform && pool.V > LawTestAutoMaxV && (rule.Law != nil || rule.TreeLaw != nil) {
		rule.Law, rule.TreeLaw = nil, nil
		p.Rep.Notes = append(p.Rep.Notes, fmt.Sprintf("the sampler-vs-law test was left out: V = %d > %d, where the rule's law (O(γV) a step, about 2 ms at V = 32000) would dominate; add --law-test to run it", pool.V, LawTestAutoMaxV))
	}
	p.Src, p.Rule, p.Cfg = src, rule, cfg
	return p, nil
}

// ruleOf builds the chain or tree rule req names (treeRuleOf,
// chainRuleOf) and, with req.Conform, puts the named rule's law in place
// of its own. It fills rep's parameters and drafter; greedy says the rule
// is greedy, batched that it draws its randomness per batch.
func ruleOf(req Request, rep *Report) (rule check.Rule, greedy, batched bool, err error) {
	if algos.IsTree(req.Algo) {
		rule, batched, err = treeRuleOf(req, rep)
	} else {
		rule, greedy, err = chainRuleOf(req, rep)
	}
	if err != nil || req.Conform == "" {
		return rule, greedy, batched, err
	}
	// The reference takes the parameters --conform gives, else the
	// tested rule's when it is the same rule, else its defaults.
	name, _, err := ParseConform(req.Conform)
	if err != nil {
		return rule, greedy, batched, err
	}
	var ps algos.Params
	if name == rule.Name || name == req.Algo {
		ps = rep.Params
	}
	rule.Conform, rule.Law, rule.TreeLaw = true, nil, nil
	if rule.Tree != nil {
		rule.TreeLaw, rule.LawName, err = TreeLaw(req.Conform, ps)
	} else {
		rule.Law, rule.LawName, err = ChainLaw(req.Conform, ps)
	}
	return rule, greedy, batched, err
}

// treeRuleOf builds the tree rule req names with its drafter (kind, k
// candidates, branching); batched says it verifies a batch at a time.
func treeRuleOf(req Request, rep *Report) (check.Rule, bool, error) {
	var rule check.Rule
	e, err := algos.LookupTree(req.Algo)
	if err != nil {
		return rule, false, err
	}
	a, full, err := build(e, req.Params)
	if err != nil {
		return rule, false, err
	}
	kind := e.Draft
	if req.Draft != "" {
		if kind, err = sim.ParseDraftKind(req.Draft); err != nil {
			return rule, false, err
		}
	}
	if err := algos.DrafterError(e, kind.String(), "draft"); err != nil {
		return rule, false, diag.Usage(err)
	}
	k, branch, delay := draft.K(req.K, kind.String()), req.Branch, req.Delay
	if k < 1 || k > draft.MaxK {
		return rule, false, diag.Param("k", " = %d; use 1 <= k <= %d candidates", k, draft.MaxK)
	}
	if len(branch) > 0 && !draft.Branches(kind.String()) {
		return rule, false, draft.BranchError(kind.String())
	}
	if delay != 0 && !draft.Delays(kind.String()) {
		return rule, false, draft.DelayError(kind.String())
	}
	rule = check.Rule{Name: e.Name, Tree: a, Draft: kind, K: k, Branch: branch, LawName: e.Name,
		Drafter: func(q sim.Model, depth int) (sim.Drafter, error) {
			return draft.NewTree(kind, draft.Config{Q: q, K: k, Depth: depth, Branch: branch, Delay: delay})
		}}
	if lw, ok := a.(sim.TreeLawer); ok {
		rule.TreeLaw = lw
	}
	batched := false
	if ba, ok := a.(algos.BatchTreeAlgorithm); ok {
		// randomness per batch: verified in batches, with the test
		// that a batch's rows are independent
		rule.Tree, rule.TreeSteps, batched = nil, algos.BatchSteps{A: ba}, true
	}
	rep.Params, rep.K, rep.Draft = full, k, kind.String()
	return rule, batched, nil
}

// chainRuleOf builds the chain rule req names; greedy says it is greedy.
func chainRuleOf(req Request, rep *Report) (check.Rule, bool, error) {
	e, err := algos.Lookup(req.Algo)
	if err != nil {
		return check.Rule{}, false, fmt.Errorf("%w; tree rules: %s", err, strings.Join(algos.TreeNames(), ", "))
	}
	if req.K > 1 || req.Draft != "" || len(req.Branch) > 0 || req.Delay != 0 {
		return check.Rule{}, false, fmt.Errorf("algorithm %s verifies a single chain; k, draft and branch need a tree rule: %s", e.Name, strings.Join(algos.TreeNames(), ", "))
	}
	a, full, err := build(e, req.Params)
	if err != nil {
		return check.Rule{}, false, err
	}
	rep.Params = full
	return check.ChainRule(e.Name, a), e.Greedy, nil
}

// sourceOf builds the source of req: its fixed pair, or its source spec,
// refused before it is built where its per-state tallies cannot fit.
// Errors are usage errors, or the context's when it was cancelled.
func sourceOf(ctx context.Context, req Request, rule check.Rule, cfg check.Config, gamma int) (sim.Source, error) {
	if req.Pair != nil {
		ch, err := sim.NewChain(*req.Pair, gamma)
		if err != nil {
			return sim.Source{}, diag.Usage(err)
		}
		return sim.Source{Spec: "fixed", BlockSource: ch}, nil
	}
	if gamma < 1 || gamma > sim.MaxGamma {
		return sim.Source{}, diag.Param("gamma", " = %d; use 1 <= gamma <= %d", gamma, sim.MaxGamma)
	}
	if states, v, ok := source.States(req.Source, gamma, req.MemBudget); ok && !rule.Conform {
		// refuse a check whose per-state tallies cannot fit before
		// drawing its pair (which can take seconds and as much again)
		if err := check.ReserveStateTallies(states, v, gamma, cfg.Workers, cfg.MemBudget); err != nil {
			return sim.Source{}, diag.Usage(err)
		}
	}
	s, err := newSource(ctx, req.Source, gamma, cfg.Seed, req.MemBudget)
	if err != nil && ctx.Err() == nil {
		return s, diag.Usage(err)
	}
	return s, err
}

// newSource builds a source spec like source.New but returns as soon as
// ctx is cancelled: building a large pool (drawing V×contexts×(γ+1) rows
// and calibrating the draft) takes seconds and takes no context. The
// abandoned construction finishes in the background and is dropped.
func newSource(ctx context.Context, spec string, gamma int, seed uint64, budget int64) (sim.Source, error) {
	type built struct {
		src sim.Source
		err error
	}
	done := make(chan built, 1)
	go func() {
		s, err := source.New(spec, gamma, seed, budget)
		done <- built{s, err}
	}()
	select {
	case b := <-done:
		return b.src, b.err
	case <-ctx.Done():
		return sim.Source{}, ctx.Err()
	}
}

// Candidates returns every registered chain rule that has an exact law,
// built with its default parameters, as check candidates: the lossless
// rules, the lossy ones and the planted bugs (mutants), whose fits tell a
// check's reader which rule the sampler behaves like.
func Candidates() []check.Candidate {
	var out []check.Candidate
	for _, e := range algos.All() {
		a, err := e.Build(nil)
		if err != nil {
			continue
		}
		lw, ok := a.(sim.Lawer)
		if !ok {
			continue
		}
		out = append(out, check.Candidate{Name: e.Name, Summary: e.Summary, Lossless: !e.Lossy && !e.Mutant && !e.Greedy, Law: lw})
	}
	return out
}

// Suspects returns the bug catalogue (algos.Bugs) as a check's suspects:
// each bug's mutant is the candidate (of Candidates) whose law plants it,
// or, for a bug shown by the edge case or by the rows-of-a-batch tests,
// none.
func Suspects() []check.Suspect {
	var out []check.Suspect
	for _, b := range algos.Bugs() {
		s := check.Suspect{Bug: b.Name, Thread: b.Thread, Edge: b.Evidence == algos.ByEdge, Rows: b.Evidence == algos.ByRows}
		if b.Evidence == algos.ByLaw {
			s.Candidate = b.Mutant
		}
		out = append(out, s)
	}
	return out
}

// RowSuspects returns the suspects (of Suspects) that the rows-of-a-batch
// tests show: those of a tree check run in batches, which scores no law.
func RowSuspects() []check.Suspect {
	var out []check.Suspect
	for _, s := range Suspects() {
		if s.Rows {
			out = append(out, s)
		}
	}
	return out
}
