package experiments

import (
	"context"
	"fmt"
	"strings"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/table"
)

// multidraft-optimum: every multi-draft rule's exact first-position
// acceptance beside the optimum α* of its own draft kind (issue 32, the
// optimum as a yardstick), at k = 2, 4, 8 drafts.
//
// Pairs (the root rows of multidraft's pairs, V = 4, one position, so the
// exact engine enumerates every draft tree; k = 8 i.i.d. drafts are
// 4^8 = 65,536 ordered trees, and ot-optimal's law of each costs most
// of the experiment's ~1.5 s of CPU; a third pair would pass the main
// job's 2 s share):
//   - dirichlet-s1: a Dirichlet(0.5) pool (multidraftPair);
//   - markov: the root rows of multidraft's order-1 Markov pair (a = 0.5,
//     quality 0.5), as a context-free pair.
//
// Rules and their bounds: every lossless tree rule of algos' registry
// (MultidraftOptimumRules), each held to α* of its own draft kind, what
// 'simulate bound' computes for that kind: with replacement for i.i.d.
// drafts (specinfer, kseq, ot-optimal, multipath-block), without
// replacement (rrs-wor, traversal), over the greedy draft-set law
// (greedy-draft), the top-k set's p-mass (target-only, best-candidate,
// shared-uniform), and otherwise over the drafter's enumerated root set
// law (spechub's hub pair, at k = 2 only).
//
// Columns: pair, k, verifier, draft, acceptance (Pr(first emitted token ∈
// root drafts), sim.ExactTree), bound (α* of the verifier's draft kind),
// gap (= bound − acceptance), bound_iid, bound_wor, bound_topk, trees
// (draft trees enumerated), max_abs_error and lossless (the exact
// engine's verdict on the emitted token's law).

// MultidraftOptimumRules are the rules the experiment holds to the
// optimum: every registered tree rule that is neither lossy nor a planted
// bug (algos' registry, in its order), so a new multi-draft rule joins by
// registering. A rule whose drafter drafts fewer than a cell's k
// (draft.KLimit; SpecHub's pair drafts two) has no row at that k.
var MultidraftOptimumRules = multidraftOptimumRules()

func multidraftOptimumRules() []string {
	var out []string
	for _, name := range algos.TreeNames() {
		if e, err := algos.LookupTree(name); err == nil && !e.Mutant && !e.Lossy {
			out = append(out, name)
		}
	}
	return out
}

// multidraftOptimumPairs are the experiment's pairs (multidraftPair names).
var multidraftOptimumPairs = []string{"dirichlet-s1", "markov"}

func multidraftOptimumCells(Config) ([]Cell, error) {
	var cells []Cell
	for _, p := range multidraftOptimumPairs {
		for _, k := range []int64{2, 4, 8} {
			cells = append(cells, Cell{Key: []KV{{K: "pair", V: p}, {K: "k", V: k}}})
		}
	}
	return cells, nil
}

func multidraftOptimumRun(_ context.Context, _ Config, cell Cell, _ uint64) ([]Row, error) {
	name := cell.Key[0].V.(string)
	k := int(cell.Key[1].V.(int64))
	p, q, err := MultidraftRootRows(name)
	if err != nil {
		return nil, err
	}
	pair := sim.Pair{Name: name, P: sim.Fixed(p), Q: sim.Fixed(q)}
	biid, err := rootBound(sim.DraftIID, p, q, k)
	if err != nil {
		return nil, err
	}
	bwor, err := rootBound(sim.DraftWOR, p, q, k)
	if err != nil {
		return nil, err
	}
	btop, err := rootBound(sim.DraftTopK, p, q, k)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, rule := range MultidraftOptimumRules {
		if e, _ := algos.LookupTree(rule); k > draft.KLimit(e.Draft.String()) {
			continue
		}
		row, err := optimumRow(pair, rule, k)
		if err != nil {
			return nil, err
		}
		rows = append(rows, append(row, KV{K: "bound_iid", V: biid}, KV{K: "bound_wor", V: bwor}, KV{K: "bound_topk", V: btop}))
	}
	return rows, nil
}

// optimumRow is rule's exact first-position acceptance on the one-position
// pair with k root drafts of its draft kind, beside that kind's α*.
func optimumRow(pair sim.Pair, rule string, k int) (Row, error) {
	e, err := algos.LookupTree(rule)
	if err != nil {
		return nil, err
	}
	a, err := e.Build(nil)
	if err != nil {
		return nil, err
	}
	d, err := draft.NewTree(e.Draft, draft.Config{Q: pair.Q, K: k, Depth: 1})
	if err != nil {
		return nil, err
	}
	p, q := []float64(pair.P.(sim.Fixed)), []float64(pair.Q.(sim.Fixed))
	bound, err := rootBound(e.Draft, p, q, k)
	if err != nil {
		return nil, err
	}
	res, err := sim.ExactTree(pair.P, d, a.(sim.TreeLawer), sim.TreeExactConfig{})
	if err != nil {
		return nil, fmt.Errorf("multidraft-optimum: %s on %s, k = %d: %w", rule, pair.Name, k, err)
	}
	return Row{{K: "verifier", V: rule}, {K: "draft", V: e.Draft.String()}, {K: "acceptance", V: res.Acceptance},
		{K: "bound", V: bound}, {K: "gap", V: bound - res.Acceptance}, {K: "trees", V: int64(res.Trees)},
		{K: "max_abs_error", V: res.MaxAbsError}, {K: "lossless", V: res.Lossless}}, nil
}

func init() {
	Register(Experiment{Name: "multidraft-optimum", Main: 71, Section: "Multi-draft rules against the optimum",
		Summary: "exact first-position acceptance of every multi-draft rule vs α* of its draft kind (i.i.d., w/o replacement, greedy, top-k) at k = 2, 4, 8 on a Dirichlet and a Markov root pair (V = 4)",
		Cells:   multidraftOptimumCells, Run: multidraftOptimumRun,
		Figures: []Figure{{Name: "multidraft-optimum", Make: multidraftOptimumFigure}},
		Tables:  []Table{{Name: "multidraft-optimum", Make: multidraftOptimumTable}},
		Numbers: multidraftOptimumNumbers()})
}

// multidraftOptimumNumbers are the paper's numbers: each rule's mean gap
// to α* over every pair and k (ot-optimal's: its largest |gap|), and the mean α*
// for i.i.d. and without-replacement drafts.
func multidraftOptimumNumbers() []table.Number {
	var ns []table.Number
	for _, r := range MultidraftOptimumRules {
		if r == "ot-optimal" { // its largest |gap|, OptGapOTMax, says more
			continue
		}
		ns = append(ns, table.Number{Macro: "OptGap" + optMacro(r), Where: []string{"verifier", r}, Agg: table.Mean, Col: "gap", Digits: 3,
			Doc: "mean gap α* − acceptance of " + r + " over the multidraft-optimum pairs and k = 2, 4, 8"})
	}
	return append(ns,
		table.Number{Macro: "OptGapOTMax", Where: []string{"verifier", "ot-optimal"}, Agg: table.MaxAbs, Col: "gap", Doc: "largest |α* − acceptance| of ot-optimal"},
		table.Number{Macro: "OptBoundIIDMean", Where: []string{"verifier", "specinfer"}, Agg: table.Mean, Col: "bound_iid", Digits: 3, Doc: "mean α* for i.i.d. drafts"},
		table.Number{Macro: "OptBoundWORMean", Where: []string{"verifier", "specinfer"}, Agg: table.Mean, Col: "bound_wor", Digits: 3, Doc: "mean α* for drafts without replacement"})
}

// optMacro is a rule's name as LaTeX macro letters: "ot-optimal" →
// "OtOptimal" (each letter run capitalised, other characters dropped).
func optMacro(rule string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(rule, func(c rune) bool { return c < 'a' || c > 'z' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// multidraftOptimumShown is the pair the figure draws.
const multidraftOptimumShown = "dirichlet-s1"

func multidraftOptimumFigure(rows []Row) (*plots.Figure, error) {
	p, q, err := MultidraftRootRows(multidraftOptimumShown)
	if err != nil {
		return nil, err
	}
	return plots.MultidraftOptimum(rows, multidraftOptimumShown, p, q)
}

// multidraftOptimumTable has one line per pair and rule: the acceptance
// and the gap α* − acceptance at each k (in the rows' order of k).
func multidraftOptimumTable(rows []Row) table.Text {
	ks := table.Distinct(rows, "k")
	t := table.Text{Caption: "Multi-draft rules against the optimum (exact): first-token acceptance per pair, rule and k, and its gap to the optimal α* of the rule's draft kind.",
		Header: []string{"pair", "verifier", "draft"}}
	for _, k := range ks {
		t.Header = append(t.Header, fmt.Sprintf("acc. k=%g", k), fmt.Sprintf("gap k=%g", k))
	}
	t.Right = table.RightCols(len(t.Header))
	for i := 3; i < len(t.Header); i++ {
		t.Right[i] = true
	}
	for _, pair := range table.DistinctS(rows, "pair") {
		for _, v := range MultidraftOptimumRules {
			sub := table.Where(rows, table.Eq("pair", pair, "verifier", v))
			if len(sub) == 0 {
				continue
			}
			line := []string{pair, v, sub[0].String("draft")}
			for _, k := range ks {
				at := table.Where(sub, table.Eq("k", fmt.Sprint(k)))
				if len(at) != 1 {
					line = append(line, "", "")
					continue
				}
				line = append(line, dec(at[0], "acceptance", 4), dec(at[0], "gap", 4))
			}
			t.Rows = append(t.Rows, line)
		}
	}
	return t
}
