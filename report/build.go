package report

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/table"
)

// Bundle holds the merged result tables of a results directory, by
// experiment name.
type Bundle struct {
	Rows map[string][]table.Row
	Meta map[string]results.Meta
	// From is the merged table each experiment was read from, relative to
	// the results directory (LoadBundle; empty for a bundle built in
	// memory).
	From map[string]string
}

// Has reports whether the bundle holds rows of experiment name.
func (b *Bundle) Has(name string) bool { return len(b.Rows[name]) > 0 }

// LoadBundle reads DIR/runs/*/merged.parquet and any merged table
// DIR/*.parquet; two tables of one experiment are an error.
func LoadBundle(dir string) (*Bundle, error) {
	b := &Bundle{Rows: map[string][]table.Row{}, Meta: map[string]results.Meta{}, From: map[string]string{}}
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
		// the name becomes file names (figures, tables, csv): a name from
		// a file is data, checked before anything is written
		if err := fsutil.CheckName(name); err != nil {
			return nil, fmt.Errorf("%s: experiment name (metadata %s): %w", p, results.KeyExperiment, err)
		}
		if prev, dup := from[name]; dup {
			return nil, fmt.Errorf("%s and %s both hold experiment %s; keep one", prev, p, name)
		}
		from[name] = p
		b.Rows[name], b.Meta[name] = t.Rows, t.Meta
		if rel, err := filepath.Rel(dir, p); err == nil {
			b.From[name] = filepath.ToSlash(rel)
		}
	}
	return b, nil
}

// Figures returns the figures the bundle supports, in report order: the
// figures each main-job experiment declares (experiments.Experiment's
// Figures), then the generic figures of the other tables (SweepFigures).
func Figures(b *Bundle) ([]*plots.Figure, error) {
	var out []*plots.Figure
	for _, e := range experiments.MainJob() {
		if !b.Has(e.Name) {
			continue
		}
		for _, d := range e.Figures {
			fig, err := d.Make(b.Rows[e.Name])
			if err != nil {
				return nil, fmt.Errorf("figure %s: %w", d.Name, err)
			}
			if fig.Name != d.Name {
				return nil, fmt.Errorf("experiment %s declares figure %s, but its Make draws %s", e.Name, d.Name, fig.Name)
			}
			out = append(out, fig)
		}
	}
	return append(out, SweepFigures(b)...), nil
}

// Tables returns the tables the bundle supports, in report order: the
// tables each main-job experiment declares, then the generic table of
// every other table (SweepTable).
func Tables(b *Bundle) []table.Text {
	var out []table.Text
	for _, e := range experiments.MainJob() {
		if !b.Has(e.Name) {
			continue
		}
		for _, d := range e.Tables {
			t := d.Make(b.Rows[e.Name])
			t.Name = d.Name
			out = append(out, t)
		}
	}
	for _, name := range genericNames(b) {
		axes, metrics := sweepSchema(b, name)
		out = append(out, SweepTable(name, b.Rows[name], axes, metrics))
	}
	return out
}

// MainExperiments are the names of the main job's experiments in report
// order (experiments.MainJob): what 'report reproduce' runs by default and
// the sections of report.md.
var MainExperiments = mainNames()

func mainNames() []string {
	var out []string
	for _, e := range experiments.MainJob() {
		out = append(out, e.Name)
	}
	return out
}

// Build writes every figure (OUT/figures/NAME.{png,svg,pdf}), table
// (OUT/tables/NAME.{md,tex,csv}), every merged result table as CSV
// (OUT/csv/EXPERIMENT.csv, as 'report export') and OUT/report.md; it
// returns the files written. OUT is confined (fsutil.Confine: no link in
// it leads a write outside), and every output path is checked before the
// first figure is drawn.
func Build(b *Bundle, out string) ([]string, error) {
	release, err := fsutil.Confine(out)
	if err != nil {
		return nil, err
	}
	defer release()
	figs, err := Figures(b)
	if err != nil {
		return nil, err
	}
	tabs := Tables(b)
	outs, err := buildOutputs(b, out, figs, tabs)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, o := range outs {
		data, err := o.data()
		if err != nil {
			return files, fmt.Errorf("%s: %w", o.path, err)
		}
		if err := fsutil.WriteBytes(o.path, data, 0o644); err != nil {
			return files, err
		}
		files = append(files, o.path)
	}
	return files, nil
}

// output is one file Build writes: its path and how to make its bytes.
type output struct {
	path string
	data func() ([]byte, error)
}

// buildOutputs lists Build's files in the order they are written (figures,
// tables, CSV, sorted; report.md last), after creating their directories
// and checking every path (fsutil.CheckOutput): a bad one is refused
// before anything is drawn or written.
func buildOutputs(b *Bundle, out string, figs []*plots.Figure, tabs []table.Text) ([]output, error) {
	for _, d := range []string{"figures", "tables", "csv"} {
		if err := fsutil.MkdirAll(filepath.Join(out, d)); err != nil {
			return nil, err
		}
	}
	var outs []output
	add := func(dir, name, ext string, data func() ([]byte, error)) error {
		p, err := fsutil.Under(filepath.Join(out, dir), name, ext)
		if err == nil {
			outs = append(outs, output{p, data})
		}
		return err
	}
	for _, f := range figs {
		for _, ext := range []string{"png", "svg", "pdf"} {
			if err := add("figures", f.Name, "."+ext, func() ([]byte, error) { return f.Render(ext) }); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range tabs {
		for ext, text := range map[string]func() string{"md": t.Markdown, "tex": t.LaTeX, "csv": t.CSV} {
			if err := add("tables", t.Name, "."+ext, func() ([]byte, error) { return []byte(text()), nil }); err != nil {
				return nil, err
			}
		}
	}
	// every merged table as CSV, for tools without a parquet reader (the
	// notebooks read these)
	for name, rows := range b.Rows {
		err := add("csv", name, ".csv", func() ([]byte, error) {
			cols, err := results.Columns(rows)
			if err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			err = Export(&buf, results.Table{Columns: cols, Rows: rows, Meta: b.Meta[name]}, "csv")
			return buf.Bytes(), err
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(outs, func(i, j int) bool { return outs[i].path < outs[j].path })
	outs = append(outs, output{filepath.Join(out, "report.md"), func() ([]byte, error) {
		return []byte(ReportMarkdown(b, figs, tabs)), nil
	}})
	for _, o := range outs {
		if err := fsutil.CheckOutput(o.path); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// ReportMarkdown is report.md: provenance (each experiment's rows, seed,
// git revision and the merged table they were read from), then a section
// per experiment with its figures and tables: the main job's experiments
// in order (titled by their Section), then the bundle's other tables
// ("Sweep NAME"). It calls itself the reproduced results only when the
// bundle holds the whole main job; a user's sweep is "results".
func ReportMarkdown(b *Bundle, figs []*plots.Figure, tabs []table.Text) string {
	var s strings.Builder
	whole := true
	for _, name := range MainExperiments {
		whole = whole && b.Has(name)
	}
	if whole {
		s.WriteString("# specsim: reproduced results\n\n")
		s.WriteString("Generated by `report reproduce` (or `report build`) from the main job's merged tables, listed below.\n\n")
	} else {
		s.WriteString("# specsim: results\n\n")
		s.WriteString("Generated by `report build` from the merged tables listed below.\n\n")
	}
	s.WriteString("| experiment | rows | seed | git revision | merged table |\n|---|---:|---:|---|---|\n")
	type section struct {
		name, title string
		// figure and table say whether a figure or table (by name) belongs
		// to the section
		figure, table func(string) bool
	}
	var order []section
	for _, e := range experiments.MainJob() {
		if dedicated(e) {
			order = append(order, section{e.Name, e.Section,
				func(n string) bool {
					return slices.ContainsFunc(e.Figures, func(f experiments.Figure) bool { return f.Name == n })
				},
				func(n string) bool {
					return slices.ContainsFunc(e.Tables, func(t experiments.Table) bool { return t.Name == n })
				}})
		}
	}
	for _, name := range genericNames(b) {
		// a generic figure of one swept axis is named NAME-vs-AXIS
		order = append(order, section{name, "Sweep " + name,
			func(n string) bool { return n == name || strings.HasPrefix(n, name+"-") && !b.Has(n) },
			func(n string) bool { return n == name }})
	}
	for _, sec := range order {
		if !b.Has(sec.name) {
			continue
		}
		m := b.Meta[sec.name]
		from := b.From[sec.name]
		if from == "" {
			from = table.NA
		} else {
			from = "`" + from + "`"
		}
		fmt.Fprintf(&s, "| %s | %d | %s | %s | %s |\n", md(sec.name), len(b.Rows[sec.name]), md(m[results.KeySeed]), md(m[results.KeyGitRevision]), from)
	}
	s.WriteString("\n")
	for _, sec := range order {
		if !b.Has(sec.name) {
			continue
		}
		fmt.Fprintf(&s, "## %s\n\n", md(sec.title))
		for _, f := range figs {
			if sec.figure(f.Name) {
				fmt.Fprintf(&s, "![%s](figures/%s.png)\n\n*Figure: %s* ([SVG](figures/%s.svg), [PDF](figures/%s.pdf))\n\n", md(f.Name), f.Name, md(f.Caption), f.Name, f.Name)
			}
		}
		for _, t := range tabs {
			if sec.table(t.Name) {
				fmt.Fprintf(&s, "*Table: %s* ([CSV](tables/%s.csv), [LaTeX](tables/%s.tex))\n\n%s\n", md(t.Caption), t.Name, t.Name, t.Markdown())
			}
		}
	}
	return s.String()
}

// md is escape.Markdown: every string in report.md that came from a
// results file (names, seeds, revisions, captions naming them) is text,
// never Markdown or HTML. File names in links are checked names
// (fsutil.Under), so they need no escaping.
var md = escape.Markdown

// BuildDir is the 'report build' command: it loads the results directory
// dir and writes its figures, tables and report.md to out (default dir),
// returning the files written. Errors carry their exit code.
func BuildDir(dir, out string) ([]string, error) {
	if out == "" {
		out = dir
	}
	if err := fsutil.CheckOutputDir(out); err != nil {
		return nil, diag.Param("out", ": %w", err)
	}
	b, err := LoadBundle(dir)
	if err != nil {
		return nil, ioErr(err)
	}
	files, err := Build(b, out)
	if err != nil {
		return nil, ioErr(err)
	}
	return files, nil
}

// ioErr marks err as an I/O failure unless it already carries a kind
// (a bad name or a table over the memory budget in a file is the input's
// fault: usage), so the exit code says what went wrong.
func ioErr(err error) error {
	if err == nil || diag.KindOf(err) != nil {
		return err
	}
	if errors.Is(err, sim.ErrMemBudget) {
		return diag.Usage(err)
	}
	return diag.IO(err)
}
