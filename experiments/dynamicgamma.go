package experiments

import (
	"context"
	"fmt"

	"github.com/specsim/specsim/lm"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/seq"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// In dynamic-gamma rows, gain is the mean over prompts of the per-prompt
// speedup minus the best fixed γ's (the fixed γ of largest overall
// speedup), gain_lo and gain_hi its 95% normal interval over the rows'
// prompts (a mean of per-prompt ratios, so not the difference of the
// speedups, which are ratios of totals), and
// exceeds_oracle flags a policy whose speedup is above the oracle's.

// The slice of dynamic-gamma the report draws and quotes: the code corpus
// at the cheaper draft cost.
const (
	dynamicCorpus = lm.Code
	dynamicCost   = 0.05
)

// dynamicSlice is the dynamic-gamma rows of one policy on the report's
// corpus and draft cost.
func dynamicSlice(policy string) []string {
	return []string{"corpus", dynamicCorpus, "c", fmt.Sprint(dynamicCost), "policy", policy}
}

// DynamicGammaThresholds are the confidence thresholds dynamic-gamma runs.
var DynamicGammaThresholds = []float64{0.02, 0.05, 0.1, 0.3}

func init() {
	Register(Experiment{
		Name:    "dynamic-gamma",
		Main:    77,
		Section: "Dynamic draft length",
		Summary: "draft length policies (fixed gamma, confidence threshold, oracle) on code and prose: speedup and gain over the best fixed gamma with paired 95% intervals",
		Cells: func(Config) ([]Cell, error) {
			var cells []Cell
			for _, c := range []string{lm.Code, lm.Prose} {
				for _, cost := range []float64{0.05, 0.2} {
					cells = append(cells, Cell{Key: []KV{{K: "corpus", V: c}, {K: "c", V: cost}}})
				}
			}
			return cells, nil
		},
		Run:     runDynamicGamma,
		Figures: []Figure{{Name: "dynamic-gamma", Make: plots.DynamicGamma}},
		Tables:  []Table{{Name: "dynamic-gamma", Make: dynamicTable}},
		Numbers: []table.Number{
			{Macro: "DynamicBestFixed", Where: dynamicSlice("fixed"), Agg: table.Max, Col: "speedup", Digits: 2, Doc: "best fixed-γ speedup (code, c = 0.05)"},
			{Macro: "DynamicBestFixedGamma", Where: dynamicSlice("fixed"), Col: "best_fixed_gamma", Doc: "its γ"},
			{Macro: "DynamicConf", Where: dynamicSlice("conf:0.1"), Col: "speedup", Digits: 2, Doc: "conf:0.1 speedup"},
			{Macro: "DynamicConfGain", Where: dynamicSlice("conf:0.1"), Col: "gain", Digits: 2, Doc: "conf:0.1 gain over the best fixed γ"},
			{Macro: "DynamicPrompts", Where: dynamicSlice("conf:0.1"), Col: "prompts", Doc: "the prompts the intervals are over"},
			{Macro: "DynamicOracle", Where: dynamicSlice("oracle"), Col: "speedup", Digits: 2, Doc: "the oracle's speedup"},
		},
	})
}

func runDynamicGamma(ctx context.Context, cfg Config, cell Cell, seed uint64) ([]Row, error) {
	corpus := cell.Key[0].V.(string)
	cost := cell.Key[1].V.(float64)
	pr, err := seqPair(ctx, corpus, 0.5)
	if err != nil {
		return nil, err
	}
	type run struct {
		pol   draft.Policy
		gamma int
		r     seq.Report
	}
	var runs []run
	for g := 1; g <= seqMaxGamma; g++ {
		runs = append(runs, run{pol: draft.Policy{Kind: draft.PolicyFixed}, gamma: g})
	}
	for _, t := range DynamicGammaThresholds {
		runs = append(runs, run{pol: draft.Policy{Kind: draft.PolicyConf, Threshold: t}, gamma: seqMaxGamma})
	}
	runs = append(runs, run{pol: draft.Policy{Kind: draft.PolicyOracle}, gamma: seqMaxGamma})
	best := -1
	for i := range runs {
		r, err := seq.RunPair(ctx, pr, seqSpec(cfg, seed, seq.Config{Drafter: draft.ChainName, Algo: "token", Gamma: runs[i].gamma,
			Policy: runs[i].pol, Cost: cost}))
		if err != nil {
			return nil, err
		}
		if r.Interrupted {
			return nil, fmt.Errorf("dynamic-gamma %s: interrupted", cell.ID())
		}
		runs[i].r = r
		if runs[i].pol.Kind == draft.PolicyFixed && (best < 0 || r.Speedup > runs[best].r.Speedup) {
			best = i
		}
	}
	oracle := runs[len(runs)-1].r.Speedup
	perPrompt := func(r seq.Report, i int) float64 { return float64(r.PerPrompt[i].Emitted) / r.PerPrompt[i].Cost }
	var rows []Row
	for _, rn := range runs {
		var d stattest.Moments
		for i := range rn.r.PerPrompt {
			d.Add(perPrompt(rn.r, i) - perPrompt(runs[best].r, i))
		}
		s := d.Summary(0.95)
		rows = append(rows, Row{{K: "policy", V: rn.pol.String()}, {K: "gamma", V: int64(rn.gamma)},
			{K: "speedup", V: rn.r.Speedup}, {K: "speedup_lo", V: rn.r.SpeedupCI[0]}, {K: "speedup_hi", V: rn.r.SpeedupCI[1]},
			{K: "tokens_per_call", V: rn.r.TokensPerCall}, {K: "mean_accepted_length", V: rn.r.MeanAcceptedLength},
			{K: "drafted_per_call", V: float64(rn.r.Drafted) / float64(rn.r.TargetCalls)},
			{K: "best_fixed_gamma", V: int64(runs[best].gamma)}, {K: "prompts", V: int64(len(rn.r.PerPrompt))}, {K: "gain", V: s.Mean},
			{K: "gain_lo", V: s.Lo}, {K: "gain_hi", V: s.Hi}, {K: "oracle_speedup", V: oracle},
			{K: "exceeds_oracle", V: rn.r.Speedup > oracle}, {K: "verdict", V: rn.r.Verdict.Verdict}})
	}
	return rows, nil
}

// dynamicTable is dynamic-gamma per setting: the best fixed γ, then each
// dynamic policy and the oracle with the draft tokens it spent per target
// call, its speedup and its paired gain over the best fixed γ, each with
// its 95% interval over prompts.
func dynamicTable(rows []Row) table.Text {
	t := table.Text{Caption: "Draft-length policies per corpus and draft cost c (token verification, chain drafter, target cache λ = 0.5): the best fixed γ, the confidence policies conf:τ and the oracle (charged only for accepted drafts: an upper bound), " +
		"with the draft tokens each spent per target call, its speedup under the walltime model and its gain over the best fixed γ (paired over the same prompts), each with its 95% interval over prompts.",
		Header: []string{"corpus", "c", "policy", "drafts/call", "speedup", "95% CI", "gain", "gain 95% CI"},
		Right:  table.RightCols(8, 1, 3, 4, 6)}
	for _, r := range rows {
		pol := r.String("policy")
		if pol == "fixed" {
			if g, _ := r.Float("gamma"); g != table.Num(r, "best_fixed_gamma") {
				continue
			}
			pol = "fixed γ = " + dec(r, "gamma", 0) + " (best)"
		}
		t.Rows = append(t.Rows, []string{r.String("corpus"), dec(r, "c", 2), pol, dec(r, "drafted_per_call", 2), dec(r, "speedup", 2),
			bracket(r, "speedup_lo", "speedup_hi", 2), dec(r, "gain", 2), bracket(r, "gain_lo", "gain_hi", 2)})
	}
	return t
}
