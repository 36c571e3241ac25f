package experiments

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/table"
)

// KV, Row and Cell live in the leaf package table; experiments builds
// rows in every file, and these aliases keep that code short. Other
// packages name them table.KV, table.Row and table.Cell.
type (
	KV   = table.KV
	Row  = table.Row
	Cell = table.Cell
)

// Config configures a run of an experiment.
type Config struct {
	// Seed is the master seed.
	Seed uint64
	// Workers bounds the goroutines a cell may use (0: all cores).
	Workers int
	// Scale multiplies the default trial counts (1 is the default size).
	Scale float64
	// Progress, if set, receives Monte Carlo progress within a cell.
	Progress func(done, total int64)
	// MemBudget is the most bytes one source of a cell may take (0:
	// sim.DefaultMemBudget).
	MemBudget int64
}

// MaxScale is the largest Config.Scale (and --scale) accepted: the
// default trial counts of the experiments are at most 10⁶, so every scaled
// count stays within sim.MaxTrials.
const MaxScale = 1e6

// CheckScale returns a usage error naming name (a diag.ParamError) unless
// s is a finite factor in (0, MaxScale].
func CheckScale(name string, s float64) error {
	if !(s > 0) || s > MaxScale {
		return diag.Param(name, " = %g; use a positive factor up to %g (at most %d trials per count)", s, MaxScale, int64(sim.MaxTrials))
	}
	return nil
}

// Trials scales a default trial count by c.Scale (at least 1), saturating
// at sim.MaxTrials: the product never wraps (CheckScale keeps real scales
// below the saturation).
func (c Config) Trials(n int64) int64 {
	s := c.Scale
	if s <= 0 {
		s = 1
	}
	t := float64(n) * s
	if !(t < sim.MaxTrials) {
		return sim.MaxTrials
	}
	return max(1, int64(t))
}

// MC returns the Monte Carlo options of c.
func (c Config) MC() sim.MCOptions { return sim.MCOptions{Workers: c.Workers, Progress: c.Progress} }

// Experiment is a named experiment: how its rows are computed and what
// the report shows of them.
type Experiment struct {
	Name, Summary string
	// Main places the experiment in the main job ('report reproduce') and
	// in report.md, in increasing order (0: not in the main job); Section
	// is the title of its section in report.md.
	Main    int
	Section string
	// Cells lists the grid for cfg (nil: the experiment has no grid and
	// is computed by Whole only).
	Cells func(cfg Config) ([]Cell, error)
	// Run computes one cell's rows; seed is CellSeed(cfg.Seed, name, cell).
	// It is set exactly when Cells is.
	Run func(ctx context.Context, cfg Config, cell Cell, seed uint64) ([]Row, error)
	// Whole, if set, is how the main job computes the experiment: every
	// row in one call, stored as one merged table with no cell files, in
	// place of Cells through the sweep runner (the fms scenarios, and the
	// replay of the sample log, whose stored rows carry no cell key).
	Whole func(ctx context.Context, cfg Config) ([]Row, error)

	// Figures, Tables and Numbers are what the report and the paper show
	// of the experiment's merged rows: figures/NAME.{png,svg,pdf},
	// tables/NAME.{md,tex,csv} and the \Macro definitions of numbers.tex.
	// Only an experiment of the main job (Main > 0) declares them; the
	// report gives any other table it finds generic sweep figures and a
	// generic table.
	Figures []Figure
	Tables  []Table
	Numbers []table.Number
	// NumbersAt places the experiment's Numbers in numbers.tex, ascending
	// (0: at Main). numbers.tex is checked byte for byte
	// (report.TestReproduceChecksums), and its order predates report.md's
	// sections: the audit's numbers come before the drafters' and the
	// replay's last.
	NumbersAt int

	// Timed marks an experiment whose rows are timings of the machine
	// (throughput): they differ from run to run, so the reproduce
	// checksums leave out its rows, its tables and its numbers, and the
	// paper quotes them as measurements of the processor it names.
	Timed bool

	// Spec, if set, makes the experiment spec-driven (like verify): a
	// sweep spec may give it any axes Spec.CheckCells accepts and the
	// metrics Spec.Metrics lists. Without it a spec accepts exactly the
	// key names of the experiment's default cells as axes, and any column
	// its rows have as a metric.
	Spec *SpecKind
}

// Figure is one figure of an experiment: Make draws it from the
// experiment's merged rows, and the figure it returns is named Name (the
// stem of its files).
type Figure struct {
	Name string
	Make func(rows []Row) (*plots.Figure, error)
}

// Table is one formatted table of an experiment: Make builds it from the
// experiment's merged rows; Name is the stem of its files (the report
// sets the built table's Name to it).
type Table struct {
	Name string
	Make func(rows []Row) table.Text
}

// SpecKind describes a spec-driven experiment (Experiment.Spec).
type SpecKind struct {
	// CheckCells validates the cells a spec's axes expand to, before any
	// runs, and returns an error naming the axis and what it accepts.
	CheckCells func(cells []Cell) error
	// CheckMem, if set, checks what the cells would build (their sources)
	// against a memory budget in bytes, which is the front end's and not
	// the spec's, so it runs apart from CheckCells (sweep.Spec.CheckMem).
	CheckMem func(cells []Cell, budget int64) error
	// Metrics lists every metric column the experiment's rows may have.
	Metrics []string
}

// CellSeed derives a cell's seed from the master seed and the cell's
// identity only.
func CellSeed(master uint64, experiment string, c Cell) uint64 {
	return sim.StreamID(experiment+"|"+c.ID(), master)
}

var (
	registry = map[string]Experiment{}
	// figureOf, tableOf and numberOf map each declared figure, table and
	// number to its experiment: their names are file names and macros, so
	// two experiments may not share one.
	figureOf, tableOf, numberOf = map[string]string{}, map[string]string{}, map[string]string{}
)

// macroName is what LaTeX accepts as a macro name without \makeatletter.
var macroName = regexp.MustCompile(`^[A-Za-z]+$`)

// Register adds a named experiment. It panics on a duplicate name and on
// a declaration that cannot work (programmer errors): Cells without Run
// or the reverse, neither a grid nor Whole, figures, tables or numbers
// declared outside the main job, and a figure or table name or a macro
// that is empty, malformed or already declared.
func Register(e Experiment) {
	if err := checkDeclaration(e); err != nil {
		panic("experiments: " + e.Name + ": " + err.Error())
	}
	registry[e.Name] = e
	for _, f := range e.Figures {
		figureOf[f.Name] = e.Name
	}
	for _, t := range e.Tables {
		tableOf[t.Name] = e.Name
	}
	for _, n := range e.Numbers {
		numberOf[n.Macro] = e.Name
	}
}

// checkDeclaration is Register's check of e against itself and the
// registered experiments.
func checkDeclaration(e Experiment) error {
	if _, dup := registry[e.Name]; dup {
		return errors.New("duplicate experiment")
	}
	if (e.Cells == nil) != (e.Run == nil) {
		return errors.New("Cells and Run go together")
	}
	if e.Cells == nil && e.Whole == nil {
		return errors.New("neither Cells nor Whole")
	}
	if e.Main <= 0 && len(e.Figures)+len(e.Tables)+len(e.Numbers) > 0 {
		return errors.New("figures, tables and numbers are declared by main-job experiments (Main > 0)")
	}
	mine := map[string]bool{}
	claim := func(kind string, seen map[string]string, name string, ok bool) error {
		if !ok {
			return fmt.Errorf("%s %q is malformed or has no Make", kind, name)
		}
		if prev, dup := seen[name]; dup || mine[kind+name] {
			if !dup {
				prev = e.Name
			}
			return fmt.Errorf("%s %s is already declared by %s", kind, name, prev)
		}
		mine[kind+name] = true
		return nil
	}
	for _, f := range e.Figures {
		if err := claim("figure", figureOf, f.Name, f.Name != "" && f.Make != nil); err != nil {
			return err
		}
	}
	for _, t := range e.Tables {
		if err := claim("table", tableOf, t.Name, t.Name != "" && t.Make != nil); err != nil {
			return err
		}
	}
	for _, n := range e.Numbers {
		if err := claim("number", numberOf, n.Macro, macroName.MatchString(n.Macro)); err != nil {
			return err
		}
	}
	return nil
}

// Lookup returns the experiment called name or an error listing the known
// ones.
func Lookup(name string) (Experiment, error) {
	e, ok := registry[name]
	if !ok {
		return Experiment{}, fmt.Errorf("unknown experiment %q; known: %s", name, strings.Join(Names(), ", "))
	}
	return e, nil
}

// Names returns the registered experiment names, sorted.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// MainJob returns the experiments of the main job (Main > 0) in order.
func MainJob() []Experiment {
	var out []Experiment
	for _, e := range registry {
		if e.Main > 0 {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Main != out[j].Main {
			return out[i].Main < out[j].Main
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// RunAll computes e's rows in this process, as the main job stores them:
// Whole's rows where e has Whole, else every cell in order, each row
// prefixed with the experiment's name and the cell's key.
func RunAll(ctx context.Context, e Experiment, cfg Config) ([]Row, error) {
	if e.Whole != nil {
		return e.Whole(ctx, cfg)
	}
	cells, err := e.Cells(cfg)
	if err != nil {
		return nil, err
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("experiment %s: the grid is empty", e.Name)
	}
	var out []Row
	for _, c := range cells {
		rows, err := e.Run(ctx, cfg, c, CellSeed(cfg.Seed, e.Name, c))
		if err != nil {
			return out, fmt.Errorf("experiment %s, cell %s: %w", e.Name, c.ID(), err)
		}
		for _, r := range rows {
			out = append(out, Prefix(e.Name, c, r))
		}
	}
	return out, nil
}

// Prefix returns r with the experiment name and the cell key in front
// (columns of r that repeat a key column are dropped).
func Prefix(name string, c Cell, r Row) Row {
	out := Row{{K: "experiment", V: name}}
	seen := map[string]bool{"experiment": true}
	for _, kv := range c.Key {
		out = append(out, kv)
		seen[kv.K] = true
	}
	for _, kv := range r {
		if !seen[kv.K] {
			out = append(out, kv)
		}
	}
	return out
}
