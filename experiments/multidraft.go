package experiments

import (
	"context"
	"fmt"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
	"gonum.org/v1/gonum/stat/distmv"
)

// multidraft: acceptance and E[emitted tokens] per step against the number
// of drafts k = 1..8 for every lossless tree rule (each with the draft kind
// it is registered for) and the optimal bound α* (algos.OptimalAcceptance).
//
// Pairs:
//   - khisti-q2=X: the three-symbol toy of Khisti et al. (arXiv 2410.18234,
//     Fig. 2): p uniform on 3 symbols, q = (1/3, X, 2/3 - X), X swept over
//     0, 0.1, 0.2, 1/3, 0.5; one position (depth 1), exact.
//   - dirichlet-sN: a context-free random pair over V = 4 (Dirichlet(0.5)
//     rows, seeded by the cell); one position, exact.
//   - markov: a random order-1 Markov pair over V = 4 (a = 0.5, quality
//     0.5, drawn from the cell seed), chains/trees of depth 3, Monte Carlo
//     with a 95% interval on the acceptance; the bound is for the root
//     position.
//
// Columns: pair, k, verifier, draft, method (exact|mc), acceptance
// (Pr(first emitted token ∈ root drafts)), expected_emitted, bound (α* of
// the verifier's own draft law at the root), gap (= bound - acceptance),
// bound_iid and bound_wor (α* with and without replacement), and for exact
// cells max_abs_error and lossless; for mc cells ci_lo/ci_hi and trials.

// MultidraftRules are the lossless tree rules the experiment compares.
var MultidraftRules = []string{"specinfer", "kseq", "rrs-wor", "greedy-draft", "target-only"}

var khistiQ2 = []float64{0, 0.1, 0.2, 1.0 / 3, 0.5}

func multidraftCells(Config) ([]Cell, error) {
	var pairs []string
	for _, x := range khistiQ2 {
		pairs = append(pairs, fmt.Sprintf("khisti-q2=%.4g", x))
	}
	pairs = append(pairs, "dirichlet-s1", "dirichlet-s2", "markov")
	var cells []Cell
	for _, p := range pairs {
		for k := 1; k <= 8; k++ {
			cells = append(cells, Cell{Key: []KV{{K: "pair", V: p}, {K: "k", V: int64(k)}}})
		}
	}
	return cells, nil
}

// MultidraftRootRows returns the target and draft rows at the root of
// the named multidraft pair (what a figure shows of the pair).
func MultidraftRootRows(name string) (p, q []float64, err error) {
	pair, _, err := multidraftPair(name, 0)
	if err != nil {
		return nil, nil, err
	}
	v := pair.P.Vocab()
	p, q = make([]float64, v), make([]float64, v)
	pair.P.Next(nil, p)
	pair.Q.Next(nil, q)
	return p, q, nil
}

// multidraftPair builds the pair of a cell; depth is the tree depth.
func multidraftPair(name string, seed uint64) (pair sim.Pair, depth int, err error) {
	for _, x := range khistiQ2 {
		if name == fmt.Sprintf("khisti-q2=%.4g", x) {
			p := sim.Fixed{1.0 / 3, 1.0 / 3, 1.0 / 3}
			q := sim.Fixed{1.0 / 3, x, 2.0/3 - x}
			return sim.Pair{Name: name, P: p, Q: q}, 1, nil
		}
	}
	switch name {
	case "dirichlet-s1", "dirichlet-s2":
		// The pair depends on its name only, so every k sees the same pair.
		rng := sim.NewRand(uint64(len(name))+uint64(name[len(name)-1]), sim.StreamID("multidraft/"+name))
		alpha := []float64{0.5, 0.5, 0.5, 0.5}
		dir := distmv.NewDirichlet(alpha, rng)
		p, q := dir.Rand(nil), dir.Rand(nil)
		sim.Normalize(p)
		sim.Normalize(q)
		return sim.Pair{Name: name, P: sim.Fixed(p), Q: sim.Fixed(q)}, 1, nil
	case "markov":
		pr, err := sim.NewMarkovPair(sim.NewRand(7, sim.StreamID("multidraft/markov")), sim.MarkovConfig{V: 4, Order: 1, A: 0.5, Quality: 0.5})
		return pr, 3, err
	}
	return sim.Pair{}, 0, fmt.Errorf("multidraft: unknown pair %q", name)
}

// rootBound returns α* at the root for draft kind kind with k children.
func rootBound(kind sim.DraftKind, p, q []float64, k int) (float64, error) {
	switch kind {
	case sim.DraftIID:
		return algos.OptimalAcceptance(p, q, k, true)
	case sim.DraftWOR:
		return algos.OptimalAcceptance(p, q, k, false)
	case sim.DraftGreedy:
		sets, probs := algos.GreedyDraftSetLaw(q, k)
		return algos.OptimalAcceptanceSets(p, sets, probs), nil
	case sim.DraftTopK:
		return algos.OptimalAcceptanceSets(p, [][]int{sim.TopTokens(nil, q, k)}, []float64{1}), nil
	}
	// any other drafter: α* over the law of its root draft set, enumerated
	d, err := draft.NewTree(kind, draft.Config{Q: sim.Fixed(q), K: k, Depth: 1})
	if err != nil {
		return 0, fmt.Errorf("multidraft: no bound for draft kind %v: %w", kind, err)
	}
	sets, probs, err := algos.DrafterSetLaw(d, nil)
	if err != nil {
		return 0, fmt.Errorf("multidraft: no bound for draft kind %v: %w", kind, err)
	}
	return algos.OptimalAcceptanceSets(p, sets, probs), nil
}

func multidraftRun(ctx context.Context, cfg Config, cell Cell, seed uint64) ([]Row, error) {
	name := cell.Key[0].V.(string)
	k := int(cell.Key[1].V.(int64))
	pair, depth, err := multidraftPair(name, seed)
	if err != nil {
		return nil, err
	}
	p, q, err := MultidraftRootRows(name)
	if err != nil {
		return nil, err
	}
	biid, err := algos.OptimalAcceptance(p, q, k, true)
	if err != nil {
		return nil, err
	}
	bwor, err := algos.OptimalAcceptance(p, q, k, false)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, rule := range MultidraftRules {
		e, err := algos.LookupTree(rule)
		if err != nil {
			return nil, err
		}
		a, err := e.Build(nil)
		if err != nil {
			return nil, err
		}
		d, err := draft.NewTree(e.Draft, draft.Config{Q: pair.Q, K: k, Depth: depth})
		if err != nil {
			return nil, err
		}
		bound, err := rootBound(e.Draft, p, q, k)
		if err != nil {
			return nil, err
		}
		row := Row{{K: "verifier", V: rule}, {K: "draft", V: e.Draft.String()}}
		if depth == 1 {
			res, err := sim.ExactTree(pair.P, d, a.(sim.TreeLawer), sim.TreeExactConfig{})
			if err != nil {
				return nil, err
			}
			row = append(row, KV{K: "method", V: "exact"}, KV{K: "acceptance", V: res.Acceptance}, KV{K: "expected_emitted", V: res.ExpectedEmitted},
				KV{K: "bound", V: bound}, KV{K: "gap", V: bound - res.Acceptance}, KV{K: "bound_iid", V: biid}, KV{K: "bound_wor", V: bwor},
				KV{K: "max_abs_error", V: res.MaxAbsError}, KV{K: "lossless", V: res.Lossless})
		} else {
			acc, emit, lo, hi, n, err := treeMonteCarlo(ctx, cfg, pair, d, a, seed, rule)
			if err != nil {
				return nil, err
			}
			row = append(row, KV{K: "method", V: "mc"}, KV{K: "acceptance", V: acc}, KV{K: "expected_emitted", V: emit},
				KV{K: "bound", V: bound}, KV{K: "gap", V: bound - acc}, KV{K: "bound_iid", V: biid}, KV{K: "bound_wor", V: bwor},
				KV{K: "ci_lo", V: lo}, KV{K: "ci_hi", V: hi}, KV{K: "trials", V: n})
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// treeMonteCarlo estimates the root acceptance (with a 95% Wilson
// interval) and E[emitted] of rule a on trees from d.
func treeMonteCarlo(ctx context.Context, cfg Config, pair sim.Pair, d sim.Drafter, a sim.TreeAlgorithm, seed uint64, rule string) (acc, emit, lo, hi float64, n int64, err error) {
	type accum struct{ hits, emitted int64 }
	// Trial i draws its tree from the draft stream and the rule's coins
	// from the coins stream of unit i of run.Named("multidraft"): rules
	// of the same draft kind see the same trees.
	l := &run.Loop{Seed: seed, Keys: run.Named("multidraft"), Trees: draft.TreeRounds(d, pair.P, nil),
		Verifiers: []run.Verifier{run.Tree(a)}}
	total, n, err := run.Rounds(ctx, cfg.Trials(20000), l, cfg.MC(),
		func() *accum { return &accum{} },
		func(ac *accum, r *run.Round) error {
			o := r.TreeOutcome()
			ac.emitted += int64(r.Tree.Nodes[o.Node].Depth + 1)
			if sim.RootAccepted(r.Tree, o) {
				ac.hits++
			}
			return nil
		},
		func(dst, src *accum) { dst.hits += src.hits; dst.emitted += src.emitted })
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	lo, hi = stattest.Wilson(total.hits, n, 0.95)
	return float64(total.hits) / float64(n), float64(total.emitted) / float64(n), lo, hi, n, nil
}

func init() {
	Register(Experiment{Name: "multidraft", Main: 70, Section: "Multi-draft verification vs the optimal bound",
		Summary: "multi-draft acceptance and E[emitted] vs k = 1..8 for the lossless tree rules and the optimal bound (Khisti toy, synthetic, Markov)",
		Cells:   multidraftCells, Run: multidraftRun,
		Figures: []Figure{{Name: "multidraft", Make: multidraftFigure}},
		Tables:  []Table{{Name: "multidraft", Make: func(r []Row) table.Text { return multidraftTable(r, multidraftShown) }}},
		Numbers: []table.Number{
			{Macro: "MultiSpecInfer", Where: multiSlice("specinfer", "8"), Col: "acceptance", Digits: 3, Doc: "SpecInfer acceptance at k = 8"},
			{Macro: "MultiBoundIID", Where: multiSlice("specinfer", "8"), Col: "bound_iid", Digits: 3, Doc: "α* i.i.d. at k = 8"},
			{Macro: "MultiRRS", Where: multiSlice("rrs-wor", "8"), Col: "acceptance", Digits: 3, Doc: "RRS w/o replacement acceptance at k = 8"},
			{Macro: "MultiBoundWOR", Where: multiSlice("rrs-wor", "8"), Col: "bound_wor", Digits: 3, Doc: "α* w/o replacement at k = 8"},
			{Macro: "MultiSingle", Where: multiSlice("specinfer", "1"), Col: "acceptance", Digits: 3, Doc: "k = 1 acceptance (Σ min(p, q))"},
		}})
}

// multidraftShown is the pair the report draws, tabulates and quotes.
const multidraftShown = "dirichlet-s1"

// multidraftFigure draws multidraft on multidraftShown, its root rows in
// the caption.
func multidraftFigure(rows []Row) (*plots.Figure, error) {
	p, q, err := MultidraftRootRows(multidraftShown)
	if err != nil {
		return nil, err
	}
	return plots.Multidraft(rows, multidraftShown, p, q)
}

// multiSlice is multidraft's row of verifier with k drafts on the
// report's pair.
func multiSlice(verifier, k string) []string {
	return []string{"pair", multidraftShown, "verifier", verifier, "k", k}
}

// multidraftTable is multidraft's table at k ∈ {1, 2, 4, 8} on one pair.
func multidraftTable(rows []Row, pair string) table.Text {
	t := table.Text{Caption: fmt.Sprintf("Multi-draft verification on the %s pair: first-token acceptance (exact) per verifier and k, the optimal α* for the verifier's draft law, and the gap.", pair),
		Header: []string{"verifier", "draft", "k", "acceptance", "α*", "gap", "E[emitted]"}, Right: table.RightCols(7, 2, 3, 4, 5, 6)}
	for _, r := range rows {
		k, _ := r.Float("k")
		if r.String("pair") != pair || (k != 1 && k != 2 && k != 4 && k != 8) {
			continue
		}
		t.Rows = append(t.Rows, []string{r.String("verifier"), r.String("draft"), dec(r, "k", 0), dec(r, "acceptance", 4),
			dec(r, "bound", 4), dec(r, "gap", 4), dec(r, "expected_emitted", 4)})
	}
	return t
}
