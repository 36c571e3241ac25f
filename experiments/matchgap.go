package experiments

import (
	"context"
	"fmt"
	"math"

	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/table"
)

// match-gap sets the per-position acceptance of naive sampled exact match
// (algos.ExactMatch; fms-extras issue 12), Σ_x p(x)q(x), beside token
// verification's, Σ_x min(p(x), q(x)) (Leviathan et al., arXiv
// 2211.17192, §3.5), computed exactly on a Zipf target
// p(x) ∝ 1/(x+1) over V = 32 tokens and the draft
// q = β·p + (1 − β)·uniform, for draft qualities β from 0 to 1, with the
// expected tokens per step at γ = 4, Σ_{i≤γ} α^i (Leviathan Eq. 1).
// Exact match keeps a draft token only when an independent target sample
// equals it, so even q = p accepts Σ p² < 1.
const (
	matchGapV     = 32
	matchGapGamma = 4
)

func init() {
	Register(Experiment{
		Name:    "match-gap",
		Main:    90,
		Section: "Exact match against token verification",
		Summary: "per-position acceptance of naive sampled exact match (Σ p·q) and of token verification (Σ min(p, q)), exact, on a Zipf target over 32 tokens against drafts of quality β",
		Cells: func(Config) ([]Cell, error) {
			var cells []Cell
			for _, b := range []float64{0, 0.25, 0.5, 0.75, 1} {
				cells = append(cells, Cell{Key: []KV{{K: "beta", V: b}}})
			}
			return cells, nil
		},
		Run: runMatchGap,
		Figures: []Figure{{Name: "match-gap", Make: func(rows []Row) (*plots.Figure, error) {
			figs, err := plots.Sweep("match-gap", rows, []string{"beta", "rule"}, []string{"alpha"})
			if err != nil {
				return nil, err
			}
			figs[0].Name = "match-gap"
			return figs[0], nil
		}}},
		Tables: []Table{{Name: "match-gap", Make: matchGapTable}},
		Numbers: []table.Number{
			{Macro: "MatchGapAtOne", Where: []string{"rule", "exact-match", "beta", "1"}, Col: "alpha", Digits: 3, Doc: "exact match's acceptance with q = p (Σ p²)"},
		},
	})
}

// runMatchGap computes the cell's rows, one per rule: its acceptance and
// the tokens per step it gives at γ = 4.
func runMatchGap(_ context.Context, _ Config, c Cell, _ uint64) ([]Row, error) {
	beta, err := cellFloat(c, "beta")
	if err != nil {
		return nil, err
	}
	if beta < 0 || beta > 1 {
		return nil, fmt.Errorf("match-gap: beta = %g; use 0 <= beta <= 1", beta)
	}
	p, q := make([]float64, matchGapV), make([]float64, matchGapV)
	z := 0.0
	for x := range p {
		p[x] = 1 / float64(x+1)
		z += p[x]
	}
	match := 0.0
	for x := range p {
		p[x] /= z
		q[x] = beta*p[x] + (1-beta)/matchGapV
		match += p[x] * q[x]
	}
	token := sim.Alpha(p, q)
	return []Row{{{K: "beta", V: beta}, {K: "rule", V: "token"}, {K: "alpha", V: token}, {K: "tokens", V: stepTokens(token)}},
		{{K: "beta", V: beta}, {K: "rule", V: "exact-match"}, {K: "alpha", V: match}, {K: "tokens", V: stepTokens(match)}}}, nil
}

// stepTokens is the expected tokens per step at γ = matchGapGamma for a
// per-position acceptance a, Σ_{i=0}^{γ} a^i (Leviathan Eq. 1, which is
// (1 − a^{γ+1})/(1 − a) for a < 1, and γ+1 at a = 1).
func stepTokens(a float64) float64 {
	s := 0.0
	for i := range matchGapGamma + 1 {
		s += math.Pow(a, float64(i))
	}
	return s
}

// matchGapTable is one row per β: both acceptances and tokens per step.
func matchGapTable(rows []Row) table.Text {
	t := table.Text{Caption: fmt.Sprintf("Per-position acceptance, exact, of naive sampled exact match (Σ p·q) and token verification (Σ min(p, q)) on a Zipf target over %d tokens against the draft β·p + (1 − β)·uniform, and the tokens per step each gives at γ = %d.", matchGapV, matchGapGamma),
		Header: []string{"β", "α token", "α exact match", "tokens/step token", "tokens/step exact match"}, Right: table.RightCols(5, 0, 1, 2, 3, 4)}
	byRule := map[string]map[string]Row{"token": {}, "exact-match": {}}
	var betas []string
	for _, r := range rows {
		b := r.String("beta")
		if len(byRule["token"])+len(byRule["exact-match"]) == 0 || (byRule["token"][b] == nil && byRule["exact-match"][b] == nil) {
			betas = append(betas, b)
		}
		if m := byRule[r.String("rule")]; m != nil {
			m[b] = r
		}
	}
	for _, b := range betas {
		tok, em := byRule["token"][b], byRule["exact-match"][b]
		t.Rows = append(t.Rows, []string{dec(tok, "beta", 2), dec(tok, "alpha", 3), dec(em, "alpha", 3), dec(tok, "tokens", 3), dec(em, "tokens", 3)})
	}
	return t
}
