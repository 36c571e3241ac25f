package experiments

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// The fms-extras scenarios of the fms-extras design note (foundation-model-stack/fms-extras
// issue 12). Vocabulary (9 tokens): a b c d e f g h z = 0 1 2 3 4 5 6 7 8.
//
// fms-example: candidates "a b", "a c", "a d", "e f"; target
//
//	p(.|ctx)      = ½ a + ½ e                 (first position)
//	p(.|a)        = uniform over {b, c, d, z}
//	p(.|e)        = uniform over {f, g}
//	p(.|anything else, and every longer prefix) = uniform over all 9 tokens
//
// (the last row only feeds the bonus token after a fully matched
// candidate and does not affect the first token).
//
// fms-coverage: candidates "a b", "c d", "e f", "g h"; target ¼ on each of
// a, c, e, g at the first position and uniform over all 9 tokens after.
const (
	tokA, tokB, tokC, tokD, tokE, tokF, tokG, tokH, tokZ = 0, 1, 2, 3, 4, 5, 6, 7, 8
	fmsV                                                 = 9
)

// FMSVocab names the scenario tokens by index.
var FMSVocab = []string{"a", "b", "c", "d", "e", "f", "g", "h", "z"}

type fmsModel struct{ coverage bool }

func (fmsModel) Vocab() int { return fmsV }

func (m fmsModel) Next(ctx []int, dst []float64) {
	clear(dst)
	set := func(toks ...int) {
		for _, x := range toks {
			dst[x] = 1 / float64(len(toks))
		}
	}
	switch {
	case len(ctx) == 0 && m.coverage:
		set(tokA, tokC, tokE, tokG)
	case len(ctx) == 0:
		set(tokA, tokE)
	case len(ctx) == 1 && !m.coverage && ctx[0] == tokA:
		set(tokB, tokC, tokD, tokZ)
	case len(ctx) == 1 && !m.coverage && ctx[0] == tokE:
		set(tokF, tokG)
	default:
		for i := range dst {
			dst[i] = 1.0 / fmsV
		}
	}
}

// ScenarioNames lists the named scenarios.
func ScenarioNames() []string { return []string{"fms-coverage", "fms-example"} }

// ScenarioConfidence is the level of the simulation intervals: a fixed
// seed's interval misses the exact value with probability 1e-6.
const ScenarioConfidence = 1 - 1e-6

// Scenario runs a named scenario with the tree rule algo: exactly (by
// sim.ExactTree on the scenario's single fixed tree) and by simulation
// (trials steps, seeded; trial i uses stream StreamID("scenario/NAME/ALGO",
// i)). fms-example reports P(first emitted token = a) as p_first_a (target
// value ½); fms-coverage reports the first-token acceptance as acceptance:
// Pr(a drafted first token is accepted as such, the accepted node is not
// the root). Both also
// report the exact law of the first emitted token and its TV to p.
// trials must lie in [1, sim.MaxTrials]. When ctx is cancelled after some
// trials finished, the row reports those (its trials column says how
// many) and the error is marked diag.ErrInterrupted.
func Scenario(ctx context.Context, name, algo string, trials int64, seed uint64, workers int) (Row, error) {
	var model fmsModel
	var cands [][]int
	switch name {
	case "fms-example":
		cands = [][]int{{tokA, tokB}, {tokA, tokC}, {tokA, tokD}, {tokE, tokF}}
	case "fms-coverage":
		model.coverage = true
		cands = [][]int{{tokA, tokB}, {tokC, tokD}, {tokE, tokF}, {tokG, tokH}}
	default:
		return nil, fmt.Errorf("unknown scenario %q; known: %s", name, strings.Join(ScenarioNames(), ", "))
	}
	if err := sim.CheckTrials("trials", trials); err != nil {
		return nil, fmt.Errorf("scenario: %w", diag.ParamOf("trials", err))
	}
	e, err := algos.LookupTree(algo)
	if err != nil {
		return nil, err
	}
	if e.NeedsQ {
		var ok []string
		for _, t := range algos.AllTree() {
			if !t.NeedsQ && !t.Mutant {
				ok = append(ok, t.Name)
			}
		}
		return nil, fmt.Errorf("scenario %s: %s needs draft probabilities, and the fms-extras candidates carry none; use %s", name, algo, strings.Join(ok, ", "))
	}
	a, err := e.Build(nil)
	if err != nil {
		return nil, err
	}
	lw, ok := a.(sim.TreeLawer)
	if !ok {
		return nil, fmt.Errorf("scenario: %s has no exact law", algo)
	}
	d, err := draft.NewFixed(cands)
	if err != nil {
		return nil, err
	}
	res, err := sim.ExactTree(model, d, lw, sim.TreeExactConfig{})
	if err != nil {
		return nil, err
	}
	// hit reports the scenario's event on one outcome.
	hit := func(t *sim.Tree, o sim.TreeOutcome) bool {
		first := o.Next
		if o.Node != 0 {
			var buf [sim.MaxTreeDepth]int
			first = t.Path(buf[:0], o.Node)[0]
		}
		if name == "fms-example" {
			return first == tokA
		}
		return sim.DraftAccepted(o)
	}
	// Trial i draws its tree from the draft stream and the rule's coins
	// from the coins stream of unit i of run.Named("scenario/"+name): every
	// algorithm of a scenario sees the same trees and coins.
	l := &run.Loop{Seed: seed, Keys: run.Named("scenario/" + name), Trees: draft.TreeRounds(d, model, nil),
		Verifiers: []run.Verifier{run.Tree(a)}}
	total, n, err := run.Rounds(ctx, trials, l, sim.MCOptions{Workers: workers},
		func() *int64 { return new(int64) },
		func(k *int64, r *run.Round) error {
			if hit(r.Tree, r.TreeOutcome()) {
				*k++
			}
			return nil
		},
		func(dst, src *int64) { *dst += *src })
	if err != nil {
		if ctx.Err() == nil || n == 0 {
			return nil, err
		}
		// Interrupted: the row reports the n finished trials.
		err = diag.Interrupted(fmt.Errorf("scenario %s: interrupted after %d of %d trials; the row reports the finished ones", name, n, trials))
	}
	lo, hi := stattest.Wilson(*total, n, ScenarioConfidence)
	exact := res.FirstAccepted
	field := "first_accepted" // sim.DraftAccepted, as 'exact --k' names it
	if name == "fms-example" {
		exact = res.First[tokA]
		field = "p_first_a"
	}
	exact = math.Min(1, math.Max(0, exact)) // a probability summed from masses may exceed 1 by an ulp
	first := map[string]float64{}
	for x, v := range res.First {
		if v > 0 {
			first[FMSVocab[x]] = v
		}
	}
	keys := make([]string, 0, len(first))
	for k := range first {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var law []string
	for _, k := range keys {
		law = append(law, fmt.Sprintf("%s:%.12g", k, first[k]))
	}
	return Row{
		{K: "scenario", V: name}, {K: "algorithm", V: algo},
		{K: field, V: float64(*total) / float64(n)}, {K: field + "_exact", V: exact},
		{K: "ci_lo", V: lo}, {K: "ci_hi", V: hi}, {K: "confidence", V: ScenarioConfidence},
		{K: "trials", V: n}, {K: "seed", V: int64(seed)},
		{K: "first_law_exact", V: strings.Join(law, ",")}, {K: "first_tv_exact", V: res.FirstTV},
		{K: "max_abs_error", V: res.MaxAbsError}, {K: "lossless", V: res.Lossless},
	}, err
}

// ScenariosName is the experiment of the fms scenarios in the main job:
// every scenario with every ScenarioAlgos rule.
const ScenariosName = "fms-scenarios"

// ScenarioAlgos are the tree rules the main job runs on each fms
// scenario: the biased naive scheme and the rules whose draft kind is a
// fixed candidate set.
var ScenarioAlgos = []string{"naive", "shared-uniform", "best-candidate", "target-only"}

// scenarioTrials is the main job's simulated steps per scenario and rule
// at scale 1.
const scenarioTrials = 100000

func init() {
	Register(Experiment{
		Name:    ScenariosName,
		Main:    72,
		Section: "Multi-candidate bias (fms-extras scenarios)",
		Summary: "the fms-extras scenarios (fms-extras issue 12) with the naive scheme and the fixed-candidate tree rules: exact first-token law and simulation",
		Whole:   scenarioRows,
		Tables:  []Table{{Name: ScenariosName, Make: scenarioTable}},
		Numbers: []table.Number{
			{Macro: "FmsNaive", Where: []string{"scenario", "fms-example", "algorithm", "naive"}, Col: "p_first_a_exact", Digits: 4, Doc: "naive P(first = a), exact"},
			{Macro: "FmsShared", Where: []string{"scenario", "fms-example", "algorithm", "shared-uniform"}, Col: "p_first_a_exact", Digits: 4, Doc: "shared-uniform P(first = a)"},
			{Macro: "FmsBestCoverage", Where: []string{"scenario", "fms-coverage", "algorithm", "best-candidate"}, Col: "first_accepted_exact", Digits: 2, Doc: "best-candidate coverage: first token accepted as drafted"},
			{Macro: "FmsSharedCoverage", Where: []string{"scenario", "fms-coverage", "algorithm", "shared-uniform"}, Col: "first_accepted_exact", Digits: 2, Doc: "shared-uniform coverage: first token accepted as drafted"},
		},
	})
}

// scenarioRows runs every scenario with every ScenarioAlgos rule
// (Scenario, cfg.Trials(scenarioTrials) steps each, seeded by the master
// seed itself), one row each behind an experiment column.
func scenarioRows(ctx context.Context, cfg Config) ([]Row, error) {
	trials := cfg.Trials(scenarioTrials)
	var rows []Row
	for _, name := range ScenarioNames() {
		for _, a := range ScenarioAlgos {
			r, err := Scenario(ctx, name, a, trials, cfg.Seed, cfg.Workers)
			if err != nil {
				return nil, fmt.Errorf("scenario %s with %s: %w", name, a, err)
			}
			rows = append(rows, append(Row{{K: "experiment", V: ScenariosName}}, r...))
		}
	}
	return rows, nil
}

// scenarioTable is fms-scenarios' table.
func scenarioTable(rows []Row) table.Text {
	t := table.Text{Caption: "Multi-candidate bias (the fms-extras scenarios, fms-extras issue 12): fms-example reports P(first token = a) (target ½), fms-coverage the probability that the first token is accepted as drafted (first_accepted); exact value, simulation with its 1−10⁻⁶ interval, and the exact TV of the first token's law to p.",
		Header: []string{"scenario", "algorithm", "measure", "exact", "simulated", "interval", "first-token TV", "lossless"}, Right: table.RightCols(8, 3, 4, 6)}
	for _, r := range rows {
		m := "p_first_a"
		if _, ok := r.Get(m); !ok {
			m = "first_accepted"
		}
		t.Rows = append(t.Rows, []string{r.String("scenario"), r.String("algorithm"), m, dec(r, m+"_exact", 4), dec(r, m, 4),
			"[" + dec(r, "ci_lo", 4) + ", " + dec(r, "ci_hi", 4) + "]", dec(r, "first_tv_exact", 4), tick(r, "lossless")})
	}
	return t
}
