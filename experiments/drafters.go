package experiments

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/lm"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/seq"
	"github.com/specsim/specsim/table"
)

// The sequence experiments run whole generations (package seq) on the
// real-text n-gram pairs of package lm: a 6-gram interpolated Kneser–Ney
// target and a bigram draft, both on the BPE tokenizer (V = 4096) of the
// corpus: the Go source tree (code) or the Debian licence texts (prose).
// Prompts are 256 tokens of held-out files.
//
// drafters: for each corpus, target cache weight λ (0: a plain n-gram
// target; 0.8: the target copies from its context as a real model does on
// editing tasks), drafter (chain, heads, lookup, tree) and γ,
// tokens per target call and speedup (walltime model of package seq with
// c = drafterCost and v = 0), with 95% intervals over the prompts, the
// acceptance, the sequence-level verdict, and beside them Leviathan et
// al.'s closed forms drawn from the measured mean β (mean_beta):
// leviathan_tokens = (1 - α^(γ+1))/(1 - α) and leviathan_speedup = that
// over γc + 1. Where β varies along the sequence (and for drafters that
// are not i.i.d. chains) the measured values leave the closed forms: that
// is where the i.i.d. assumption breaks. Chain, heads and lookup are
// verified by token verification (lookup's one-hot rows make it the
// membership rule); the tree is EAGLE-2's dynamic tree (k = 4 nodes kept
// per layer, depth γ) verified by target-only.
//
// dynamic-gamma: for each corpus and draft cost c, the speedup of fixed γ =
// 1..8 (target cache λ = 0.5), of the confidence policies conf:τ (stop after a token drafted with
// q < τ; cap 8) and of the oracle (charged only for the accepted draft; cap
// 8, an upper bound), each with the gain over the best fixed γ and its
// paired 95% interval over prompts (same prompts and keyed streams).

// Sizes and settings of the sequence experiments.
const (
	seqPrompts    = 6
	seqPromptLen  = 256
	seqTokens     = 150
	drafterCost   = 0.05
	seqTargetSpec = ":order=6,cache="
	seqDraftSpec  = "order=2"
	seqMaxGamma   = 8
)

var (
	seqPairsMu sync.Mutex
	seqPairs   = map[string]*lm.Pair{}
)

// seqPair trains (once per process; the disk cache keeps it across runs)
// the pair of a corpus with target cache weight λ.
func seqPair(ctx context.Context, corpus string, cache float64) (*lm.Pair, error) {
	seqPairsMu.Lock()
	defer seqPairsMu.Unlock()
	spec := fmt.Sprintf("%s%s%g", corpus, seqTargetSpec, cache)
	if p, ok := seqPairs[spec]; ok {
		return p, nil
	}
	p, err := lm.NewPairContext(ctx, spec, seqDraftSpec, lm.Options{CacheDir: lm.DefaultCacheDir()})
	if err != nil {
		return nil, err
	}
	seqPairs[spec] = p
	return p, nil
}

func init() {
	Register(Experiment{
		Name:    "drafters",
		Main:    76,
		Section: "Drafters on whole generations",
		Summary: "whole generations on code and prose, plain and copying targets: tokens per call and speedup vs gamma for chain, heads, lookup and tree drafters, with Leviathan's closed form from the measured mean beta",
		Cells: func(Config) ([]Cell, error) {
			var cells []Cell
			for _, c := range []string{lm.Code, lm.Prose} {
				for _, lam := range []float64{0, 0.8} {
					for _, d := range seq.Drafters() {
						for _, g := range []int64{1, 2, 4, 8} {
							cells = append(cells, Cell{Key: []KV{{K: "corpus", V: c}, {K: "cache", V: lam}, {K: "drafter", V: d}, {K: "gamma", V: g}}})
						}
					}
				}
			}
			return cells, nil
		},
		Run:     runDrafters,
		Figures: []Figure{{Name: "drafters", Make: plots.Drafters}},
		Tables:  []Table{{Name: "drafters", Make: draftersTable}},
		Numbers: []table.Number{
			{Macro: "DraftersChain", Where: draftersSlice("chain"), Agg: table.Max, Col: "speedup", Digits: 2, Doc: "chain drafter's best speedup over γ (code, λ = 0.8)"},
			{Macro: "DraftersLookup", Where: draftersSlice("lookup"), Agg: table.Max, Col: "speedup", Digits: 2, Doc: "lookup drafter's best speedup over γ"},
			{Macro: "DraftersTree", Where: draftersSlice("tree"), Agg: table.Max, Col: "speedup", Digits: 2, Doc: "tree drafter's best speedup over γ"},
		},
	})
}

// The slice of drafters the report draws and quotes: the code corpus with
// a copying target (cache λ = 0.8), where lookup drafting differs most
// from the chain.
const (
	draftersCorpus = lm.Code
	draftersCache  = 0.8
)

// draftersSlice is the drafters rows of one drafter on the report's
// corpus and cache weight.
func draftersSlice(drafter string) []string {
	return []string{"corpus", draftersCorpus, "cache", fmt.Sprint(draftersCache), "drafter", drafter}
}

// seqSpec is the generation of one sequence-experiment cell.
func seqSpec(cfg Config, seed uint64, c seq.Config) seq.Spec {
	c.Tokens = int(cfg.Trials(seqTokens))
	c.Seed, c.Workers, c.Progress = seed, cfg.Workers, cfg.Progress
	return seq.Spec{NumPrompts: seqPrompts, PromptLen: seqPromptLen, Config: c}
}

func runDrafters(ctx context.Context, cfg Config, cell Cell, seed uint64) ([]Row, error) {
	corpus, cache, drafter := cell.Key[0].V.(string), cell.Key[1].V.(float64), cell.Key[2].V.(string)
	g := int(cell.Key[3].V.(int64))
	pr, err := seqPair(ctx, corpus, cache)
	if err != nil {
		return nil, err
	}
	algo := "token"
	if drafter == seq.Tree {
		algo = "target-only"
	}
	r, err := seq.RunPair(ctx, pr, seqSpec(cfg, seed, seq.Config{Drafter: drafter, Algo: algo, Gamma: g, Cost: drafterCost}))
	if err != nil {
		return nil, err
	}
	row := Row{{K: "algo", V: algo}, {K: "tokens_per_call", V: r.TokensPerCall}, {K: "tokens_per_call_lo", V: r.TokensPerCallCI[0]}, {K: "tokens_per_call_hi", V: r.TokensPerCallCI[1]},
		{K: "speedup", V: r.Speedup}, {K: "speedup_lo", V: r.SpeedupCI[0]}, {K: "speedup_hi", V: r.SpeedupCI[1]},
		{K: "acceptance", V: r.Acceptance}, {K: "mean_accepted_length", V: r.MeanAcceptedLength}, {K: "mean_beta", V: r.MeanBeta}}
	// Leviathan's closed forms need a chain's β in (0, 1): n/a (NaN) for
	// the tree drafter, which has none
	lt, ls := math.NaN(), math.NaN()
	if r.MeanBeta > 0 && r.MeanBeta < 1 {
		if lt, err = algos.ExpectedTokens(r.MeanBeta, g); err != nil {
			return nil, err
		}
		if ls, err = algos.WalltimeImprovement(r.MeanBeta, g, drafterCost); err != nil {
			return nil, err
		}
	}
	row = append(row, KV{K: "leviathan_tokens", V: lt}, KV{K: "leviathan_speedup", V: ls},
		KV{K: "verdict", V: r.Verdict.Verdict}, KV{K: "p_value", V: r.Verdict.PValue}, KV{K: "emitted", V: r.Emitted}, KV{K: "target_calls", V: r.TargetCalls})
	if r.Interrupted {
		return nil, fmt.Errorf("drafters %s: interrupted", cell.ID())
	}
	return []Row{row}, nil
}

// draftersTable is the drafters experiment per setting and drafter at its
// best γ (the γ of largest speedup): speedup and tokens per target call
// with their 95% intervals over prompts, the acceptance, the chain's mean
// β with Leviathan's tokens per call from it (n/a where there is no chain
// β: the tree drafter), and the sequence-level verdict over every γ.
func draftersTable(rows []Row) table.Text {
	t := table.Text{Caption: "Whole generations per corpus, target cache weight λ and drafter, at the drafter's best γ (of 1, 2, 4, 8; largest speedup): speedup under the walltime model (c = 0.05) and tokens per target call with 95% intervals over prompts, " +
		"the acceptance (accepted / drafted), the mean β = Σ min(p, q) over the drafted positions and Leviathan et al.'s Eq. 1 from it (n/a for the tree drafter, which has no chain β), " +
		"and the sequence-level losslessness verdict (violated if any γ's is).",
		Header: []string{"corpus", "λ", "drafter", "best γ", "speedup", "95% CI", "tokens/call", "95% CI", "acceptance", "mean β", "Eq. 1 tokens", "verdict"},
		Right:  table.RightCols(12, 1, 3, 4, 6, 8, 9, 10)}
	type key struct {
		corpus, drafter string
		cache           float64
	}
	var order []key
	best := map[key]Row{}
	verdict := map[key]string{}
	for _, r := range rows {
		c, _ := r.Float("cache")
		k := key{r.String("corpus"), r.String("drafter"), c}
		b, ok := best[k]
		if !ok {
			order = append(order, k)
			verdict[k] = r.String("verdict")
		}
		if r.String("verdict") == "violated" {
			verdict[k] = "violated"
		}
		if s, _ := r.Float("speedup"); !ok || s > table.Num(b, "speedup") {
			best[k] = r
		}
	}
	for _, k := range order {
		r := best[k]
		t.Rows = append(t.Rows, []string{k.corpus, dec(r, "cache", 1), k.drafter, dec(r, "gamma", 0), dec(r, "speedup", 2), bracket(r, "speedup_lo", "speedup_hi", 2),
			dec(r, "tokens_per_call", 2), bracket(r, "tokens_per_call_lo", "tokens_per_call_hi", 2), dec(r, "acceptance", 3),
			dec(r, "mean_beta", 3), dec(r, "leviathan_tokens", 2), verdict[k]})
	}
	return t
}
