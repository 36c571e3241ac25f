package report

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/table"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/paper"
)

// Number is one quoted number of the paper: a LaTeX macro \Name and its
// text.
type Number struct{ Name, Value, Doc string }

var macroName = regexp.MustCompile(`^[A-Za-z]+$`)

// Aggregates of a NumberSpec over the rows its filter keeps.
const (
	// First: column Col of the first row, with Digits decimals ("n/a"
	// when no row matches).
	First = iota
	// Count: the number of rows.
	Count
	// MaxAbs: max |Col| over the rows, as a LaTeX number (texSci).
	MaxAbs
	// Negative: the number of rows whose Col is below −NegativeTol (so
	// round-off like −2.2e-16 on an exact zero does not count).
	Negative
	// Max: the largest Col over the rows, with Digits decimals ("n/a"
	// when no row matches).
	Max
)

// NegativeTol is the tolerance of Negative: a value counts as below zero
// only when it is below −NegativeTol. It is far above float64 round-off
// (≈ 1e-16 on values of order 1) and far below any Monte Carlo interval
// end the report quotes (3 decimals).
const NegativeTol = 1e-9

// NumberSpec defines one number the paper quotes, as data: experiment Exp's
// rows filtered by Where (column/value pairs compared as text; a value
// "a|b" accepts either), aggregated by Agg.
type NumberSpec struct {
	Name, Exp string
	Where     []string
	Agg       int
	Col       string
	Digits    int
	Doc       string
}

// paperNumbers lists every number the paper quotes (after "Seed", the
// master seed, which comes from the tables' metadata).
var paperNumbers = []NumberSpec{
	{"TableOneCells", "leviathan-table1", nil, Count, "", 0, "cells of Table 1"},
	{"TableOneMatches", "leviathan-table1", []string{"matches", "true"}, Count, "", 0, "cells matching the paper"},
	{"TokensMaxDiff", "leviathan-tokens", nil, MaxAbs, "token_minus_eq1", 0, "max |exact − Eq. 1| over leviathan-tokens"},
	{"TokensEightFour", "leviathan-tokens", []string{"alpha", "0.8", "gamma", "4"}, First, "eq1", 4, "Eq. 1 at α = 0.8, γ = 4"},
	{"TokensBlockEightFour", "leviathan-tokens", []string{"alpha", "0.8", "gamma", "4"}, First, "block_exact", 4, "block exact at α = 0.8, γ = 4"},
	{"TokensBlockGainEightFour", "leviathan-tokens", []string{"alpha", "0.8", "gamma", "4"}, First, "block_gain_pct", 1, "block gain % at α = 0.8, γ = 4"},
	{"WalltimeBestGamma", "leviathan-walltime", []string{"alpha", "0.8", "c", "0.05", "is_best", "true"}, First, "gamma", 0, "best γ at α = 0.8, c = 0.05"},
	{"WalltimeBest", "leviathan-walltime", []string{"alpha", "0.8", "c", "0.05", "is_best", "true"}, First, "walltime", 2, "its walltime improvement"},
	{"BlockLowBeta", "block-vs-token", blockSlice("0.3"), First, "beta_measured", 2, "measured β of the low-quality pool"},
	{"BlockGainLow", "block-vs-token", blockSlice("0.3"), First, "gain_pct", 1, "block gain % at γ = 4, low β"},
	{"BlockHighBeta", "block-vs-token", blockSlice("0.9"), First, "beta_measured", 2, "measured β of the high-quality pool"},
	{"BlockGainHigh", "block-vs-token", blockSlice("0.9"), First, "gain_pct", 1, "block gain % at γ = 4, high β"},
	{"BlockNegative", "block-vs-token", []string{"kind", "mc", "rule", "gain"}, Negative, "ci_hi", 0, "Monte Carlo gain rows whose 95% interval lies below −1e-9"},
	{"BlockGainRows", "block-vs-token", []string{"kind", "mc", "rule", "gain"}, Count, "", 0, "Monte Carlo gain rows"},
	{"FrontierStrict", "lossy-frontier", frontierSlice("mentored", "0"), First, "acceptance", 3, "acceptance at KL = 0"},
	{"FrontierMentored", "lossy-frontier", frontierSlice("mentored", "0.03"), First, "acceptance", 3, "mentored acceptance at D = 0.03"},
	{"FrontierLenience", "lossy-frontier", frontierSlice("lenience", "0.5"), First, "acceptance", 3, "lenience l = 0.5 acceptance"},
	{"FrontierLenienceKL", "lossy-frontier", frontierSlice("lenience", "0.5"), First, "kl", 3, "its KL"},
	{"FrontierRows", "lossy-frontier", nil, Count, "", 0, "lossy-frontier rows"},
	{"FrontierDominated", "lossy-frontier", []string{"dominated", "true"}, Count, "", 0, "rows at or below mentored's acceptance"},
	{"LenienceCells", "lenience-table", nil, Count, "", 0, "lenience-table cells"},
	{"LenienceCovered", "lenience-table", []string{"covered", "true"}, Count, "", 0, "cells whose MC interval covers the exact α"},
	{"MultiSpecInfer", "multidraft", multiSlice("specinfer", "8"), First, "acceptance", 3, "SpecInfer acceptance at k = 8"},
	{"MultiBoundIID", "multidraft", multiSlice("specinfer", "8"), First, "bound_iid", 3, "α* i.i.d. at k = 8"},
	{"MultiRRS", "multidraft", multiSlice("rrs-wor", "8"), First, "acceptance", 3, "RRS w/o replacement acceptance at k = 8"},
	{"MultiBoundWOR", "multidraft", multiSlice("rrs-wor", "8"), First, "bound_wor", 3, "α* w/o replacement at k = 8"},
	{"MultiSingle", "multidraft", multiSlice("specinfer", "1"), First, "acceptance", 3, "k = 1 acceptance (Σ min(p, q))"},
	{"FmsNaive", ScenarioExperiment, []string{"scenario", "fms-example", "algorithm", "naive"}, First, "p_first_a_exact", 4, "naive P(first = a), exact"},
	{"FmsShared", ScenarioExperiment, []string{"scenario", "fms-example", "algorithm", "shared-uniform"}, First, "p_first_a_exact", 4, "shared-uniform P(first = a)"},
	{"FmsBestCoverage", ScenarioExperiment, []string{"scenario", "fms-coverage", "algorithm", "best-candidate"}, First, "first_accepted_exact", 2, "best-candidate coverage: first token accepted as drafted"},
	{"FmsSharedCoverage", ScenarioExperiment, []string{"scenario", "fms-coverage", "algorithm", "shared-uniform"}, First, "first_accepted_exact", 2, "shared-uniform coverage: first token accepted as drafted"},
	{"AuditRows", "audit", nil, Count, "", 0, "audit rows"},
	{"AuditOK", "audit", []string{"ok", "true"}, Count, "", 0, "rows with the expected verdict"},
	{"AuditMutants", "audit", []string{"kind", "mutant|tree-mutant"}, Count, "", 0, "mutant rows (chain and tree)"},
	{"AuditTokenAlpha", "audit", []string{"algorithm", "token", "kind", "rule"}, First, "alpha_hat", 3, "token α̂ (V = 2048 pool)"},
	{"AuditTokenEmitted", "audit", []string{"algorithm", "token", "kind", "rule"}, First, "mean_emitted", 2, "token mean emitted"},
	{"AuditBlockEmitted", "audit", []string{"algorithm", "block", "kind", "rule"}, First, "mean_emitted", 2, "block mean emitted"},
	{"AuditTrials", "audit", []string{"algorithm", "token", "kind", "rule"}, First, "trials", 0, "statistical trials per rule"},
	{"DraftersChain", "drafters", draftersSlice("chain"), Max, "speedup", 2, "chain drafter's best speedup over γ (code, λ = 0.8)"},
	{"DraftersLookup", "drafters", draftersSlice("lookup"), Max, "speedup", 2, "lookup drafter's best speedup over γ"},
	{"DraftersTree", "drafters", draftersSlice("tree"), Max, "speedup", 2, "tree drafter's best speedup over γ"},
	{"DynamicBestFixed", "dynamic-gamma", dynamicSlice("fixed"), Max, "speedup", 2, "best fixed-γ speedup (code, c = 0.05)"},
	{"DynamicBestFixedGamma", "dynamic-gamma", dynamicSlice("fixed"), First, "best_fixed_gamma", 0, "its γ"},
	{"DynamicConf", "dynamic-gamma", dynamicSlice("conf:0.1"), First, "speedup", 2, "conf:0.1 speedup"},
	{"DynamicConfGain", "dynamic-gamma", dynamicSlice("conf:0.1"), First, "gain", 2, "conf:0.1 gain over the best fixed γ"},
	{"DynamicOracle", "dynamic-gamma", dynamicSlice("oracle"), First, "speedup", 2, "the oracle's speedup"},
	{"SMCFcVar", "smc-steering", smcSlice("fc"), First, "relative_variance", 4, "fc Var(Ẑ)/Z² at N = 64, K = 1"},
	{"SMCMultVar", "smc-steering", smcSlice("multinomial"), First, "relative_variance", 4, "multinomial Var(Ẑ)/Z² at N = 64, K = 1"},
	{"SMCFcTV", "smc-steering", smcSlice("fc"), First, "posterior_tv", 3, "fc posterior TV at N = 64, K = 1"},
	{"SMCMultTV", "smc-steering", smcSlice("multinomial"), First, "posterior_tv", 3, "multinomial posterior TV at N = 64, K = 1"},
	{"SMCMutants", "smc-steering", []string{"mutant", "true"}, Count, "", 0, "rows of planted bugs"},
	{"ReplaySteps", ReplayExperiment, []string{"kind", "rule", "algorithm", "token"}, First, "steps", 0, "steps of the sample log"},
	{"ReplayAlpha", ReplayExperiment, []string{"kind", "rule", "algorithm", "token"}, First, "mean_alpha", 3, "mean α over the sample log"},
	{"ReplayToken", ReplayExperiment, []string{"kind", "rule", "algorithm", "token"}, First, "mean_emitted_exact", 3, "token E[emitted] on the sample log"},
	{"ReplayBlock", ReplayExperiment, []string{"kind", "rule", "algorithm", "block"}, First, "mean_emitted_exact", 3, "block E[emitted] on the sample log"},
	{"ReplayLogged", ReplayExperiment, []string{"kind", "rule", "algorithm", "logged"}, First, "mean_emitted_sampled", 3, "the logged run's mean emitted"},
}

// blockSlice is block-vs-token's Monte Carlo gain row at γ = 4 and target β.
func blockSlice(beta string) []string {
	return []string{"kind", "mc", "rule", "gain", "beta_target", beta, "gamma", "4"}
}

// frontierSlice is the lossy frontier's row of rule at value on the slice
// the report plots.
func frontierSlice(rule, value string) []string {
	return []string{"source", frontierSource, "V", fmt.Sprint(frontierV), "quality", fmt.Sprint(frontierQuality), "rule", rule, "value", value}
}

// draftersSlice is the drafters rows of one drafter on the report's
// corpus and cache weight.
func draftersSlice(drafter string) []string {
	return []string{"corpus", draftersCorpus, "cache", fmt.Sprint(draftersCache), "drafter", drafter}
}

// dynamicSlice is the dynamic-gamma rows of one policy on the report's
// corpus and draft cost.
func dynamicSlice(policy string) []string {
	return []string{"corpus", dynamicCorpus, "c", fmt.Sprint(dynamicCost), "policy", policy}
}

// smcSlice is smc-steering's row of one scheme at K = 1, N = 64 on the
// report's model.
func smcSlice(scheme string) []string {
	return []string{"model", smcModel, "scheme", scheme, "k", "1", "n", "64"}
}

// multiSlice is multidraft's row of verifier with k drafts on the report's
// pair.
func multiSlice(verifier, k string) []string {
	return []string{"pair", multidraftPair, "verifier", verifier, "k", k}
}

// keep is the filter of where: every column kv[2i] formats as one of the
// "|"-separated values kv[2i+1].
func keep(kv []string) func(table.Row) bool {
	return func(r table.Row) bool {
		for i := 0; i+1 < len(kv); i += 2 {
			if !slices.Contains(strings.Split(kv[i+1], "|"), r.String(kv[i])) {
				return false
			}
		}
		return true
	}
}

// Eval computes the number from rows (the experiment's rows).
func (n NumberSpec) Eval(rows []table.Row) string {
	rows = table.Where(rows, keep(n.Where))
	switch n.Agg {
	case Count:
		return fmt.Sprint(len(rows))
	case MaxAbs:
		m := 0.0
		for _, r := range rows {
			v, _ := r.Float(n.Col)
			m = math.Max(m, math.Abs(v))
		}
		return texSci(m)
	case Negative:
		c := 0
		for _, r := range rows {
			if v, _ := r.Float(n.Col); v < -NegativeTol {
				c++
			}
		}
		return fmt.Sprint(c)
	case Max:
		m, ok := math.Inf(-1), false
		for _, r := range rows {
			if v, has := r.Float(n.Col); has && !math.IsNaN(v) {
				m, ok = math.Max(m, v), true
			}
		}
		return fmtF(m, ok, n.Digits)
	}
	if len(rows) == 0 {
		return "n/a"
	}
	return col(rows[0], n.Col, n.Digits)
}

// Numbers computes every number the paper quotes (paperNumbers) from the
// bundle. Numbers of absent experiments read "n/a" (counts read 0).
func Numbers(b *Bundle) []Number {
	seed := "n/a"
	for _, m := range b.Meta {
		seed = m[results.KeySeed]
		break
	}
	out := []Number{{"Seed", seed, "master seed"}}
	for _, n := range paperNumbers {
		out = append(out, Number{n.Name, n.Eval(b.Rows[n.Exp]), n.Doc})
	}
	return out
}

// texSci formats v as a LaTeX number like $2.2\times10^{-16}$ (0 as 0).
func texSci(v float64) string {
	if v == 0 {
		return "0"
	}
	e := math.Floor(math.Log10(math.Abs(v)))
	return fmt.Sprintf(`$%.1f\times10^{%d}$`, v/math.Pow(10, e), int(e))
}

// NumbersTeX renders the numbers as \newcommand definitions.
func NumbersTeX(ns []Number) string {
	var s strings.Builder
	s.WriteString("% Generated by 'report paper' from the results; do not edit.\n")
	for _, n := range ns {
		if !macroName.MatchString(n.Name) {
			panic("paper: macro name " + n.Name)
		}
		fmt.Fprintf(&s, "\\newcommand{\\%s}{%s}%% %s\n", n.Name, n.Value, strings.ReplaceAll(n.Doc, "%", `\%`))
	}
	return s.String()
}

// WritePaper writes dir/paper.tex and dir/refs.bib (the embedded sources,
// unless dir already has them) and dir/generated/{numbers.tex,
// figures/*.pdf, tables/*.tex}.
func WritePaper(b *Bundle, dir string) error {
	gen := filepath.Join(dir, "generated")
	for _, d := range []string{gen, filepath.Join(gen, "figures"), filepath.Join(gen, "tables")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for name, text := range map[string]string{"paper.tex": paper.Source, "refs.bib": paper.Bib} {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); os.IsNotExist(err) {
			if err := fsutil.WriteBytes(path, []byte(text), 0o644); err != nil {
				return err
			}
		}
	}
	if err := fsutil.WriteBytes(filepath.Join(gen, "numbers.tex"), []byte(NumbersTeX(Numbers(b))), 0o644); err != nil {
		return err
	}
	figs, err := Figures(b)
	if err != nil {
		return err
	}
	for _, f := range figs {
		if err := f.Save(filepath.Join(gen, "figures", f.Name+".pdf")); err != nil {
			return err
		}
	}
	for _, t := range Tables(b) {
		if err := fsutil.WriteBytes(filepath.Join(gen, "tables", t.Name+".tex"), []byte(t.LaTeX()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// latexWarning matches the warnings that mean the paper is incomplete.
var latexWarning = regexp.MustCompile(`(?m)^(LaTeX Warning: (Reference|Citation|File).*|! .*|.*undefined.*)$`)

// BuildPDF runs latexmk on dir/paper.tex and fails if the log reports an
// undefined reference, a missing file or an error.
func BuildPDF(ctx context.Context, dir string) error {
	cmd := exec.CommandContext(ctx, "latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "paper.tex")
	cmd.Dir = dir
	outb, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("latexmk in %s failed: %w\n%s", dir, err, tail(string(outb), 3000))
	}
	log, err := os.ReadFile(filepath.Join(dir, "paper.log"))
	if err != nil {
		return err
	}
	if m := latexWarning.FindAllString(string(log), -1); len(m) > 0 {
		sort.Strings(m)
		return fmt.Errorf("%s: LaTeX reports: %s", filepath.Join(dir, "paper.log"), strings.Join(m, "; "))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Paper is the 'report paper' command: it writes the paper's generated
// inputs from the results directory results into dir and, with pdf, builds
// dir/paper.pdf; it returns the paths to print. Errors are marked with
// their kind (internal/diag).
func Paper(ctx context.Context, results, dir string, pdf bool) ([]string, error) {
	if pdf {
		if _, err := exec.LookPath("latexmk"); err != nil {
			return nil, diag.Param("pdf", ": latexmk is not installed (apt-get install texlive-latex-base texlive-latex-recommended latexmk)")
		}
	}
	b, err := LoadBundle(results)
	if err != nil {
		return nil, diag.IO(err)
	}
	if err := WritePaper(b, dir); err != nil {
		return nil, diag.IO(err)
	}
	out := []string{filepath.Join(dir, "generated")}
	if pdf {
		if err := BuildPDF(ctx, dir); err != nil {
			return out, diag.IO(err)
		}
		out = append(out, filepath.Join(dir, "paper.pdf"))
	}
	return out, nil
}
