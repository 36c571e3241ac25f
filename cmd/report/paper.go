package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/paper"
)

// Number is one quoted number of the paper: a LaTeX macro \Name and its
// text.
type Number struct{ Name, Value, Doc string }

var macroName = regexp.MustCompile(`^[A-Za-z]+$`)

// find returns the first row of rows with every column k formatting as v.
func find(rows []experiments.Row, kv ...string) experiments.Row {
	for _, r := range rows {
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			ok = ok && r.String(kv[i]) == kv[i+1]
		}
		if ok {
			return r
		}
	}
	return nil
}

func f(r experiments.Row, k string, d int) string {
	if r == nil {
		return "n/a"
	}
	return col(r, k, d)
}

// Numbers computes every number the paper quotes from the bundle.
// Numbers of absent experiments read "n/a".
func Numbers(b *Bundle) []Number {
	var out []Number
	add := func(name, value, doc string) { out = append(out, Number{name, value, doc}) }
	seed := "n/a"
	for _, m := range b.Meta {
		seed = m[results.KeySeed]
		break
	}
	add("Seed", seed, "master seed")

	t1 := b.Rows["leviathan-table1"]
	match := 0
	for _, r := range t1 {
		if r.String("matches") == "true" {
			match++
		}
	}
	add("TableOneCells", fmt.Sprint(len(t1)), "cells of Table 1")
	add("TableOneMatches", fmt.Sprint(match), "cells matching the paper")

	maxd := 0.0
	for _, r := range b.Rows["leviathan-tokens"] {
		v, _ := r.Float("token_minus_eq1")
		maxd = math.Max(maxd, math.Abs(v))
	}
	add("TokensMaxDiff", texSci(maxd), "max |exact − Eq. 1| over leviathan-tokens")
	bt := find(b.Rows["leviathan-tokens"], "alpha", "0.8", "gamma", "4")
	add("TokensEightFour", f(bt, "eq1", 4), "Eq. 1 at α = 0.8, γ = 4")
	add("TokensBlockEightFour", f(bt, "block_exact", 4), "block exact at α = 0.8, γ = 4")
	add("TokensBlockGainEightFour", f(bt, "block_gain_pct", 1), "block gain % at α = 0.8, γ = 4")

	wb := find(b.Rows["leviathan-walltime"], "alpha", "0.8", "c", "0.05", "is_best", "true")
	add("WalltimeBestGamma", f(wb, "gamma", 0), "best γ at α = 0.8, c = 0.05")
	add("WalltimeBest", f(wb, "walltime", 2), "its walltime improvement")

	mc := where(b.Rows["block-vs-token"], func(r experiments.Row) bool { return r.String("kind") == "mc" && r.String("rule") == "gain" })
	lo, hi := pickBeta(mc, "0.3", "4"), pickBeta(mc, "0.9", "4")
	add("BlockLowBeta", f(lo, "beta_measured", 2), "measured β of the low-quality pool")
	add("BlockGainLow", f(lo, "gain_pct", 1), "block gain % at γ = 4, low β")
	add("BlockHighBeta", f(hi, "beta_measured", 2), "measured β of the high-quality pool")
	add("BlockGainHigh", f(hi, "gain_pct", 1), "block gain % at γ = 4, high β")
	neg := 0
	for _, r := range where(b.Rows["block-vs-token"], func(r experiments.Row) bool { return r.String("rule") == "gain" }) {
		if lo, _ := r.Float("ci_hi"); lo < 0 {
			neg++
		}
	}
	add("BlockNegative", fmt.Sprint(neg), "gain rows whose 95% interval lies below 0")

	fr := b.Rows["lossy-frontier"]
	slice := func(rule, value string) experiments.Row {
		return find(fr, "source", frontierSource, "V", fmt.Sprint(frontierV), "quality", fmt.Sprint(frontierQuality), "rule", rule, "value", value)
	}
	add("FrontierStrict", f(slice("mentored", "0"), "acceptance", 3), "acceptance at KL = 0")
	add("FrontierMentored", f(slice("mentored", "0.03"), "acceptance", 3), "mentored acceptance at D = 0.03")
	add("FrontierLenience", f(slice("lenience", "0.5"), "acceptance", 3), "lenience l = 0.5 acceptance")
	add("FrontierLenienceKL", f(slice("lenience", "0.5"), "kl", 3), "its KL")
	dom := 0
	for _, r := range fr {
		if r.String("dominated") == "true" {
			dom++
		}
	}
	add("FrontierRows", fmt.Sprint(len(fr)), "lossy-frontier rows")
	add("FrontierDominated", fmt.Sprint(dom), "rows at or below mentored's acceptance")

	cov := 0
	for _, r := range b.Rows["lenience-table"] {
		if r.String("covered") == "true" {
			cov++
		}
	}
	add("LenienceCells", fmt.Sprint(len(b.Rows["lenience-table"])), "lenience-table cells")
	add("LenienceCovered", fmt.Sprint(cov), "cells whose MC interval covers the exact α")

	md := b.Rows["multidraft"]
	si := find(md, "pair", multidraftPair, "verifier", "specinfer", "k", "8")
	rw := find(md, "pair", multidraftPair, "verifier", "rrs-wor", "k", "8")
	add("MultiSpecInfer", f(si, "acceptance", 3), "SpecInfer acceptance at k = 8")
	add("MultiBoundIID", f(si, "bound_iid", 3), "α* i.i.d. at k = 8")
	add("MultiRRS", f(rw, "acceptance", 3), "RRS w/o replacement acceptance at k = 8")
	add("MultiBoundWOR", f(rw, "bound_wor", 3), "α* w/o replacement at k = 8")
	one := find(md, "pair", multidraftPair, "verifier", "specinfer", "k", "1")
	add("MultiSingle", f(one, "acceptance", 3), "k = 1 acceptance (Σ min(p, q))")

	sc := b.Rows[ScenarioExperiment]
	add("FmsNaive", f(find(sc, "scenario", "fms-example", "algorithm", "naive"), "p_first_a_exact", 4), "naive P(first = a), exact")
	add("FmsShared", f(find(sc, "scenario", "fms-example", "algorithm", "shared-uniform"), "p_first_a_exact", 4), "shared-uniform P(first = a)")
	add("FmsBestCoverage", f(find(sc, "scenario", "fms-coverage", "algorithm", "best-candidate"), "acceptance_exact", 2), "best-candidate coverage acceptance")
	add("FmsSharedCoverage", f(find(sc, "scenario", "fms-coverage", "algorithm", "shared-uniform"), "acceptance_exact", 2), "shared-uniform coverage acceptance")

	au := b.Rows["audit"]
	ok, mut := 0, 0
	for _, r := range au {
		if r.String("ok") == "true" {
			ok++
		}
		if k := r.String("kind"); k == "mutant" || k == "tree-mutant" {
			mut++
		}
	}
	add("AuditRows", fmt.Sprint(len(au)), "audit rows")
	add("AuditOK", fmt.Sprint(ok), "rows with the expected verdict")
	add("AuditMutants", fmt.Sprint(mut), "mutant rows (chain and tree)")
	tok := find(au, "algorithm", "token", "kind", "rule")
	blk := find(au, "algorithm", "block", "kind", "rule")
	add("AuditTokenAlpha", f(tok, "alpha_hat", 3), "token α̂ (V = 2048 pool)")
	add("AuditTokenEmitted", f(tok, "mean_emitted", 2), "token mean emitted")
	add("AuditBlockEmitted", f(blk, "mean_emitted", 2), "block mean emitted")
	add("AuditTrials", f(tok, "trials", 0), "statistical trials per rule")

	rp := b.Rows[ReplayExperiment]
	rt := find(rp, "kind", "rule", "algorithm", "token")
	rb := find(rp, "kind", "rule", "algorithm", "block")
	rl := find(rp, "kind", "rule", "algorithm", "logged")
	add("ReplaySteps", f(rt, "steps", 0), "steps of the sample log")
	add("ReplayAlpha", f(rt, "mean_alpha", 3), "mean α over the sample log")
	add("ReplayToken", f(rt, "mean_emitted_exact", 3), "token E[emitted] on the sample log")
	add("ReplayBlock", f(rb, "mean_emitted_exact", 3), "block E[emitted] on the sample log")
	add("ReplayLogged", f(rl, "mean_emitted_sampled", 3), "the logged run's mean emitted")
	return out
}

func pickBeta(rows []experiments.Row, beta, gamma string) experiments.Row {
	return find(rows, "beta_target", beta, "gamma", gamma)
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
// unless dir already has them) and dir/generated/{numbers.tex, figures/*.pdf, tables/*.tex}.
func WritePaper(b *Bundle, dir string) error {
	gen := filepath.Join(dir, "generated")
	for _, d := range []string{gen, filepath.Join(gen, "figures"), filepath.Join(gen, "tables")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	src := filepath.Join(dir, "paper.tex")
	if _, err := os.Stat(src); os.IsNotExist(err) {
		if err := os.WriteFile(src, []byte(paper.Source), 0o644); err != nil {
			return err
		}
	}
	if bib := filepath.Join(dir, "refs.bib"); !fileExists(bib) {
		if err := os.WriteFile(bib, []byte(paper.Bib), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(gen, "numbers.tex"), []byte(NumbersTeX(Numbers(b))), 0o644); err != nil {
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
		if err := os.WriteFile(filepath.Join(gen, "tables", t.Name+".tex"), []byte(t.LaTeX()), 0o644); err != nil {
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

func paperCommand() *cli.Command {
	return &cli.Command{
		Name:      "paper",
		Usage:     "regenerate the paper's figures, tables and numbers from a results directory (and build the PDF with --pdf)",
		ArgsUsage: "RESULTS",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "paper", Usage: "paper `DIR` (paper.tex is written there if absent; inputs go to DIR/generated)"},
			&cli.BoolFlag{Name: "pdf", Usage: "run latexmk and fail on missing figures or references"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cliutil.Usage(fmt.Errorf("paper needs one results directory (the --out of 'report reproduce')"))
			}
			b, err := LoadBundle(c.Args().First())
			if err != nil {
				return cliutil.IO(err)
			}
			dir := c.String("out")
			if err := WritePaper(b, dir); err != nil {
				return cliutil.IO(err)
			}
			fmt.Fprintln(c.App.Writer, filepath.Join(dir, "generated"))
			if c.Bool("pdf") {
				if _, err := exec.LookPath("latexmk"); err != nil {
					return cliutil.Usage(fmt.Errorf("--pdf: latexmk is not installed (apt-get install texlive-latex-base texlive-latex-recommended latexmk)"))
				}
				if err := BuildPDF(c.Context, dir); err != nil {
					return cliutil.IO(err)
				}
				fmt.Fprintln(c.App.Writer, filepath.Join(dir, "paper.pdf"))
			}
			return nil
		},
	}
}

func where(rows []experiments.Row, keep func(experiments.Row) bool) []experiments.Row {
	var out []experiments.Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
