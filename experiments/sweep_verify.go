package experiments

import (
	"context"
	"fmt"
	"strings"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/sim/stattest"
)

// Verify is the generic spec-driven experiment: for every cell (source,
// rule and its parameters, γ, trials, replicate) it runs Monte Carlo steps
// of the rule on the source and reports the mean accepted and emitted
// tokens per step with 95% confidence intervals, and the per-token
// acceptance estimate α̂ = Σ accepted / Σ draft tokens tried (a step that
// accepts n < γ tokens tried n+1, one that accepts all γ tried γ). Where
// the source is a small model pair and the rule has an exact law, it also
// reports the exact engine's expected values (sim.Exact, from the empty
// context, the same start as the Monte Carlo steps).
//
// Each step's block comes from the source's sim.BlockSource: a markov
// source (sim.Chain) draws the draft chain from q autoregressively from the
// empty context and scores it with both models; a pool source (dirichlet,
// temperature, zipf) picks a context uniformly per step (sim.Pool.Next). The source's own seed, when its spec
// gives none, derives from the master seed and the source spec alone, so
// every rule, γ and replicate of a sweep sees the same model pair.
const VerifyName = "verify"

// Axes of verify.
var verifyAxes = []string{"source", "algo", "gamma", "trials", "replicate", "vocab", "quality", "param.<name>"}

// VerifyMetrics are the metric columns of verify.
var VerifyMetrics = []string{
	"mean_accepted", "mean_accepted_lo", "mean_accepted_hi",
	"mean_emitted", "mean_emitted_lo", "mean_emitted_hi",
	"alpha_hat", "n", "exact_accepted", "exact_emitted",
}

// verifyDefaultTrials is the trial count of a cell without a trials axis.
const verifyDefaultTrials = 20000

func init() {
	Register(Experiment{
		Name:    VerifyName,
		Summary: "Monte Carlo acceptance of rules on sources over a grid (spec-driven; exact values where the engine applies)",
		Cells:   verifyDefaultCells,
		Run:     runVerify,
		Spec:    &SpecKind{CheckCells: checkVerifyCells, CheckMem: checkVerifySources, Metrics: VerifyMetrics},
	})
}

// verifyDefaultCells is verify's own grid (a spec gives it any other):
// one Markov source × token, greedy × γ = 1, 2, 3, the last key varying
// fastest.
func verifyDefaultCells(Config) ([]Cell, error) {
	var cells []Cell
	for _, algo := range []string{"token", "greedy"} {
		for _, g := range []int64{1, 2, 3} {
			cells = append(cells, Cell{Key: []KV{{K: "source", V: "markov:V=4,order=1,seed=7"}, {K: "algo", V: algo}, {K: "gamma", V: g}}})
		}
	}
	return cells, nil
}

// verifyCell is a verify cell's parsed key.
type verifyCell struct {
	source    string
	algo      algos.Entry
	algoName  string
	params    algos.Params
	gamma     int
	trials    int64
	replicate int64
}

func intValue(axis string, v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	}
	return 0, fmt.Errorf("axis %s: %v is not an integer", axis, v)
}

func floatValue(axis string, v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	}
	return 0, fmt.Errorf("axis %s: %v is not a number", axis, v)
}

// parseAlgo parses "name" or "name:k=v,k=v" (algos.ParseSpec).
func parseAlgo(text string) (algos.Entry, algos.Params, error) {
	name, ps, err := algos.ParseSpec(text)
	if err != nil {
		return algos.Entry{}, nil, fmt.Errorf("axis algo: %w", err)
	}
	e, err := algos.Lookup(name)
	if err != nil {
		return e, nil, fmt.Errorf("axis algo: %w", err)
	}
	if ps == nil {
		ps = algos.Params{}
	}
	return e, ps, nil
}

// parseVerifyCell reads a cell key; errors name the axis.
func parseVerifyCell(key []KV) (verifyCell, error) {
	vc := verifyCell{gamma: 2, trials: verifyDefaultTrials}
	var vocab, quality any
	for _, kv := range key {
		var err error
		switch name := kv.K; {
		case name == "source":
			s, ok := kv.V.(string)
			if !ok {
				return vc, fmt.Errorf("axis source: %v is not a string such as \"markov:V=4,order=1\"", kv.V)
			}
			vc.source = s
		case name == "algo":
			s, ok := kv.V.(string)
			if !ok {
				return vc, fmt.Errorf("axis algo: %v is not a string such as \"token\"", kv.V)
			}
			vc.algoName = s
		case name == "gamma":
			var g int64
			if g, err = intValue(name, kv.V); err == nil && (g < 1 || g > sim.MaxGamma) {
				err = fmt.Errorf("axis gamma: %d; use 1 <= gamma <= %d", g, sim.MaxGamma)
			}
			vc.gamma = int(g)
		case name == "trials":
			if vc.trials, err = intValue(name, kv.V); err == nil && vc.trials < 1 {
				err = fmt.Errorf("axis trials: %d; use at least 1", vc.trials)
			}
		case name == "replicate":
			if vc.replicate, err = intValue(name, kv.V); err == nil && vc.replicate < 0 {
				err = fmt.Errorf("axis replicate: %d; use a non-negative index", vc.replicate)
			}
		case name == "vocab":
			var v int64
			if v, err = intValue(name, kv.V); err == nil && v < 2 {
				err = fmt.Errorf("axis vocab: %d; use at least 2", v)
			}
			vocab = v
		case name == "quality":
			quality, err = floatValue(name, kv.V)
		case strings.HasPrefix(name, "param."):
			var f float64
			if f, err = floatValue(name, kv.V); err == nil {
				if vc.params == nil {
					vc.params = algos.Params{}
				}
				vc.params[strings.TrimPrefix(name, "param.")] = f
			}
		case name == "k":
			err = fmt.Errorf("unknown axis \"k\" for experiment verify: it runs one draft chain per step (k drafts belong to multi-draft experiments); its axes are %s", strings.Join(verifyAxes, ", "))
		default:
			err = fmt.Errorf("unknown axis %q for experiment verify; its axes are %s", name, strings.Join(verifyAxes, ", "))
		}
		if err != nil {
			return vc, err
		}
	}
	if vc.source == "" {
		return vc, fmt.Errorf("axis source is missing: verify needs a source, e.g. source = [\"markov:V=4,order=1\"]")
	}
	if vc.algoName == "" {
		return vc, fmt.Errorf("axis algo is missing: verify needs a rule, e.g. algo = [\"token\"] (see 'simulate list')")
	}
	e, ps, err := parseAlgo(vc.algoName)
	if err != nil {
		return vc, err
	}
	for k, v := range vc.params {
		if _, dup := ps[k]; dup {
			return vc, fmt.Errorf("axis param.%s: algo %q sets %s itself", k, vc.algoName, k)
		}
		ps[k] = v
	}
	vc.algo, vc.params = e, ps
	if _, err := e.Build(ps); err != nil {
		return vc, fmt.Errorf("axis algo/param: %w", err)
	}
	sp, err := source.ParseSpec(vc.source)
	if err != nil {
		return vc, fmt.Errorf("axis source: %w", err)
	}
	if vocab != nil {
		sp.Args["V"] = fmt.Sprint(vocab)
	}
	if quality != nil {
		k, _ := source.Lookup(sp.Kind)
		if k.Quality == "" {
			var knobs []string
			for _, k := range source.All() {
				if k.Quality != "" {
					knobs = append(knobs, k.Name+": "+k.Quality)
				}
			}
			return vc, fmt.Errorf("axis quality: source kind %s has no draft-quality knob (%s); set its parameters in the source string", sp.Kind, strings.Join(knobs, ", "))
		}
		sp.Args[k.Quality] = fmt.Sprint(quality)
	}
	vc.source = sp.String()
	return vc, nil
}

// checkVerifyCells validates every cell of a verify spec up front (cheap:
// no source is built beyond parsing), so a bad axis is reported before any
// work starts. The sources' memory is checkVerifySources's.
func checkVerifyCells(cells []Cell) error { return checkVerifySources(cells, sim.NoMemLimit) }

// checkVerifySources validates every cell of a verify spec, its source's
// parameters and memory (within budget bytes) included.
func checkVerifySources(cells []Cell, budget int64) error {
	seen := map[string]bool{}
	checked := map[string]bool{}
	for _, c := range cells {
		vc, err := parseVerifyCell(c.Key)
		if err != nil {
			return err
		}
		if sp, _ := source.ParseSpec(vc.source); !seen[sp.Kind] {
			seen[sp.Kind] = true
			if _, known := source.Lookup(sp.Kind); !known {
				return fmt.Errorf("axis source: unknown kind %q in %q; kinds: %s", sp.Kind, vc.source, strings.Join(source.Kinds(), ", "))
			}
		}
		// every source's parameters and memory, without building it
		if k := fmt.Sprintf("%s|%d", vc.source, vc.gamma); !checked[k] {
			checked[k] = true
			if err := source.Check(vc.source, vc.gamma, budget); err != nil {
				return fmt.Errorf("cell %s: axis source (with vocab, quality, gamma applied): %w", c.ID(), err)
			}
		}
	}
	return nil
}

// verifyAcc accumulates one chunk of verify steps.
type verifyAcc struct {
	a, e            stattest.Sums // accepted and emitted tokens per step
	accepted, tried int64
}

func runVerify(ctx context.Context, cfg Config, cell Cell, seed uint64) ([]Row, error) {
	vc, err := parseVerifyCell(cell.Key)
	if err != nil {
		return nil, err
	}
	rule, err := vc.algo.Build(vc.params)
	if err != nil {
		return nil, err
	}
	src, err := source.New(vc.source, vc.gamma, sim.StreamID("verify/source|"+vc.source, cfg.Seed), cfg.MemBudget)
	if err != nil {
		return nil, fmt.Errorf("axis source: %w", err)
	}
	g := vc.gamma
	n := cfg.Trials(vc.trials)
	// Step i draws from the streams of unit i of run.Named("verify"): a
	// pool picks its context from the source stream and samples the draft
	// by alias from the draft stream, a chain drafts from its model pair;
	// the rule's coins come from the coins stream.
	l := &run.Loop{Seed: seed, Keys: run.Named("verify"), Chains: run.Blocks(src),
		Verifiers: []run.Verifier{run.Chain(rule)}}
	tot, done, err := run.Rounds(ctx, n, l, sim.MCOptions{Workers: cfg.Workers, Progress: cfg.Progress},
		func() *verifyAcc { return &verifyAcc{} },
		func(acc *verifyAcc, r *run.Round) error { acc.add(r.Outcome(), g); return nil },
		func(dst, src *verifyAcc) {
			dst.a.Merge(src.a)
			dst.e.Merge(src.e)
			dst.accepted += src.accepted
			dst.tried += src.tried
		})
	if err != nil {
		return nil, err
	}
	a, e := tot.a.Summary(0.95), tot.e.Summary(0.95)
	row := Row{
		{K: "mean_accepted", V: a.Mean}, {K: "mean_accepted_lo", V: a.Lo}, {K: "mean_accepted_hi", V: a.Hi},
		{K: "mean_emitted", V: e.Mean}, {K: "mean_emitted_lo", V: e.Lo}, {K: "mean_emitted_hi", V: e.Hi},
		{K: "alpha_hat", V: float64(tot.accepted) / float64(tot.tried)}, {K: "n", V: done},
	}
	if pair, ok := sim.PairOf(src); ok {
		if lw, ok := rule.(sim.Lawer); ok {
			res, err := sim.Exact(pair, lw, sim.ExactConfig{Gamma: g, Greedy: vc.algo.Greedy})
			if err == nil {
				row = append(row, KV{K: "exact_accepted", V: res.ExpectedAccepted}, KV{K: "exact_emitted", V: res.ExpectedEmitted})
			}
		}
	}
	return []Row{row}, nil
}

func (a *verifyAcc) add(o sim.Outcome, g int) {
	a.a.Add(float64(o.Accepted))
	a.e.Add(float64(o.Emitted()))
	a.accepted += int64(o.Accepted)
	if o.Accepted < g {
		a.tried += int64(o.Accepted) + 1
	} else {
		a.tried += int64(g)
	}
}
