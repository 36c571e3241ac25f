package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/table"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/plots"
)

// Bundle holds the merged result tables of a results directory, by
// experiment name.
type Bundle struct {
	Rows map[string][]table.Row
	Meta map[string]results.Meta
}

// Has reports whether the bundle holds rows of experiment name.
func (b *Bundle) Has(name string) bool { return len(b.Rows[name]) > 0 }

// LoadBundle reads DIR/runs/*/merged.parquet and any merged table
// DIR/*.parquet; two tables of one experiment are an error.
func LoadBundle(dir string) (*Bundle, error) {
	b := &Bundle{Rows: map[string][]table.Row{}, Meta: map[string]results.Meta{}}
	a, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "merged.parquet"))
	c, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	paths := append(a, c...)
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s holds no merged results (runs/*/merged.parquet or *.parquet); run 'report reproduce' into %s or 'report merge' first", dir, dir)
	}
	from := map[string]string{}
	for _, p := range paths {
		t, err := results.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if len(t.Rows) == 0 {
			continue
		}
		name := t.Meta[results.KeyExperiment]
		if name == "" {
			name = t.Rows[0].String("experiment")
		}
		if prev, dup := from[name]; dup {
			return nil, fmt.Errorf("%s and %s both hold experiment %s; keep one", prev, p, name)
		}
		from[name] = p
		b.Rows[name], b.Meta[name] = t.Rows, t.Meta
	}
	return b, nil
}

// Figure settings of the report: one slice of each multi-dimensional
// experiment.
const (
	walltimeAlpha   = 0.8
	frontierSource  = "dirichlet"
	frontierV       = 1000
	frontierQuality = 0.6
	frontierBudget  = 0.03
	multidraftPair  = "dirichlet-s1"
	// drafters: the code corpus with a copying target (cache λ = 0.8),
	// where lookup drafting differs most from the chain
	draftersCorpus = "code"
	draftersCache  = 0.8
	// dynamic-gamma: the code corpus at the cheaper draft cost
	dynamicCorpus = "code"
	dynamicCost   = 0.05
	// smc-steering: the first standard model (hard constraints with a
	// soft expert)
	smcModel = "forbid+end+expert"
)

// Figures returns the figures the bundle's experiments support, in report
// order.
func Figures(b *Bundle) ([]*plots.Figure, error) {
	var out []*plots.Figure
	add := func(name string, f func([]table.Row) (*plots.Figure, error)) error {
		if !b.Has(name) {
			return nil
		}
		fig, err := f(b.Rows[name])
		if err != nil {
			return fmt.Errorf("figure %s: %w", name, err)
		}
		out = append(out, fig)
		return nil
	}
	for _, e := range []struct {
		name string
		f    func([]table.Row) (*plots.Figure, error)
	}{
		{"leviathan-tokens", plots.Tokens},
		{"leviathan-walltime", func(r []table.Row) (*plots.Figure, error) { return plots.Walltime(r, walltimeAlpha) }},
		{"block-vs-token", plots.BlockVsToken},
		{"lossy-frontier", func(r []table.Row) (*plots.Figure, error) {
			return plots.LossyFrontier(r, frontierSource, frontierV, frontierQuality)
		}},
		{"multidraft", func(r []table.Row) (*plots.Figure, error) {
			p, q, err := experiments.MultidraftRootRows(multidraftPair)
			if err != nil {
				return nil, err
			}
			return plots.Multidraft(r, multidraftPair, p, q)
		}},
		{ReplayExperiment, plots.Replay},
		{"drafters", func(r []table.Row) (*plots.Figure, error) { return plots.Drafters(r, draftersCorpus, draftersCache) }},
		{"dynamic-gamma", func(r []table.Row) (*plots.Figure, error) { return plots.DynamicGamma(r, dynamicCorpus, dynamicCost) }},
		{"smc-steering", func(r []table.Row) (*plots.Figure, error) { return plots.SMCSteering(r, smcModel) }},
	} {
		if err := add(e.name, e.f); err != nil {
			return nil, err
		}
	}
	return append(out, SweepFigures(b)...), nil
}

// Tables returns the tables the bundle's experiments support, in report
// order.
func Tables(b *Bundle) []Table {
	var out []Table
	for _, e := range []struct {
		name string
		f    func([]table.Row) Table
	}{
		{"leviathan-table1", Table1},
		{"leviathan-tokens", TokensTable},
		{"leviathan-walltime", WalltimeTable},
		{"block-vs-token", BlockTable},
		{"lossy-frontier", func(r []table.Row) Table {
			return FrontierTable(r, frontierSource, frontierV, frontierQuality, frontierBudget)
		}},
		{"lenience-table", LenienceTable},
		{"multidraft", func(r []table.Row) Table { return MultidraftTable(r, multidraftPair) }},
		{ScenarioExperiment, ScenarioTable},
		{"audit", AuditTable},
		{ReplayExperiment, ReplayTable},
	} {
		if b.Has(e.name) {
			out = append(out, e.f(b.Rows[e.name]))
		}
	}
	for _, name := range genericNames(b) {
		axes, metrics := sweepSchema(b, name)
		out = append(out, SweepTable(name, b.Rows[name], axes, metrics))
	}
	return out
}

// extraSections are report.md's sections of the stored tables that are
// not registered experiments, with their place among the Main positions
// of experiments.Experiment.
var extraSections = []struct {
	name, title string
	main        int
}{
	{ScenarioExperiment, "Multi-candidate bias (fms-extras scenarios)", 72},
	{ReplayExperiment, "Replay of the embedded sample log", 74},
}

// reportOrder and sectionTitle are the sections of report.md in order and
// their titles: the main job's experiments and extraSections.
var reportOrder, sectionTitle = sections()

func sections() ([]string, map[string]string) {
	type sec struct {
		name string
		main int
	}
	var all []sec
	title := map[string]string{}
	for _, e := range experiments.MainJob() {
		all = append(all, sec{e.Name, e.Main})
		title[e.Name] = e.Section
	}
	for _, e := range extraSections {
		all = append(all, sec{e.name, e.main})
		title[e.name] = e.title
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].main < all[j].main })
	order := make([]string, len(all))
	for i, s := range all {
		order[i] = s.name
	}
	return order, title
}

// Build writes every figure (OUT/figures/NAME.{png,svg,pdf}), table
// (OUT/tables/NAME.{md,tex,csv}), every merged result table as CSV
// (OUT/csv/EXPERIMENT.csv, as 'report export') and OUT/report.md; it
// returns the files written.
func Build(b *Bundle, out string) ([]string, error) {
	figs, err := Figures(b)
	if err != nil {
		return nil, err
	}
	tabs := Tables(b)
	var files []string
	for _, d := range []string{"figures", "tables", "csv"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return nil, err
		}
	}
	for _, f := range figs {
		for _, ext := range []string{"png", "svg", "pdf"} {
			p := filepath.Join(out, "figures", f.Name+"."+ext)
			if err := f.Save(p); err != nil {
				return files, err
			}
			files = append(files, p)
		}
	}
	for _, t := range tabs {
		for ext, text := range map[string]string{"md": t.Markdown(), "tex": t.LaTeX(), "csv": t.CSV()} {
			p := filepath.Join(out, "tables", t.Name+"."+ext)
			if err := fsutil.WriteBytes(p, []byte(text), 0o644); err != nil {
				return files, err
			}
			files = append(files, p)
		}
	}
	// every merged table as CSV, for tools without a parquet reader (the
	// notebooks read these)
	for name, rows := range b.Rows {
		cols, err := results.Columns(rows)
		if err != nil {
			return files, err
		}
		var buf bytes.Buffer
		if err := Export(&buf, results.Table{Columns: cols, Rows: rows, Meta: b.Meta[name]}, "csv"); err != nil {
			return files, err
		}
		p := filepath.Join(out, "csv", name+".csv")
		if err := fsutil.WriteBytes(p, buf.Bytes(), 0o644); err != nil {
			return files, err
		}
		files = append(files, p)
	}
	sort.Strings(files)
	p := filepath.Join(out, "report.md")
	if err := fsutil.WriteBytes(p, []byte(ReportMarkdown(b, figs, tabs)), 0o644); err != nil {
		return files, err
	}
	return append(files, p), nil
}

// ReportMarkdown is report.md: provenance, then per experiment its figure
// and table.
func ReportMarkdown(b *Bundle, figs []*plots.Figure, tabs []Table) string {
	var s strings.Builder
	s.WriteString("# specsim: reproduced results\n\n")
	s.WriteString("Generated by `report reproduce` / `report build` from the merged tables under `runs/`.\n\n")
	s.WriteString("| experiment | rows | seed | git revision |\n|---|---:|---:|---|\n")
	order := append(slices.Clone(reportOrder), genericNames(b)...)
	for _, name := range order {
		if !b.Has(name) {
			continue
		}
		m := b.Meta[name]
		fmt.Fprintf(&s, "| %s | %d | %s | %s |\n", name, len(b.Rows[name]), m[results.KeySeed], m[results.KeyGitRevision])
	}
	s.WriteString("\n")
	for _, name := range order {
		if !b.Has(name) {
			continue
		}
		title := sectionTitle[name]
		if title == "" {
			title = "Sweep " + name
		}
		fmt.Fprintf(&s, "## %s\n\n", title)
		for _, f := range figs {
			// a figure of one slice is named NAME-SLICE (drafters-code-cache0.8)
			if f.Name == name || strings.HasPrefix(f.Name, name+"-") && !b.Has(f.Name) {
				fmt.Fprintf(&s, "![%s](figures/%s.png)\n\n*Figure: %s* ([SVG](figures/%s.svg), [PDF](figures/%s.pdf))\n\n", f.Name, f.Name, f.Caption, f.Name, f.Name)
			}
		}
		for _, t := range tabs {
			if t.Name == name {
				fmt.Fprintf(&s, "*Table: %s* ([CSV](tables/%s.csv), [LaTeX](tables/%s.tex))\n\n%s\n", t.Caption, name, name, t.Markdown())
			}
		}
	}
	return s.String()
}

// BuildDir is the 'report build' command: it loads the results directory
// dir and writes its figures, tables and report.md to out (default dir),
// returning the files written. Errors carry their exit code.
func BuildDir(dir, out string) ([]string, error) {
	if out == "" {
		out = dir
	}
	b, err := LoadBundle(dir)
	if err != nil {
		return nil, diag.IO(err)
	}
	files, err := Build(b, out)
	if err != nil {
		return nil, diag.IO(err)
	}
	return files, nil
}
