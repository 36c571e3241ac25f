package experiments

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/specsim/specsim/internal/diag"
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

// Experiment is a named experiment.
type Experiment struct {
	Name, Summary string
	// Main places the experiment in the main job ('report reproduce') and
	// in report.md, in increasing order (0: not in the main job); Section
	// is the title of its section in report.md.
	Main    int
	Section string
	// Cells lists the grid for cfg.
	Cells func(cfg Config) ([]Cell, error)
	// Run computes one cell's rows; seed is CellSeed(cfg.Seed, name, cell).
	Run func(ctx context.Context, cfg Config, cell Cell, seed uint64) ([]Row, error)
}

// CellSeed derives a cell's seed from the master seed and the cell's
// identity only.
func CellSeed(master uint64, experiment string, c Cell) uint64 {
	return sim.StreamID(experiment+"|"+c.ID(), master)
}

var registry = map[string]Experiment{}

// Register adds a named experiment; it panics on a duplicate name.
func Register(e Experiment) {
	if _, dup := registry[e.Name]; dup {
		panic("experiments: duplicate experiment " + e.Name)
	}
	registry[e.Name] = e
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

// RunAll runs every cell of e in order in this process and returns all
// rows, each prefixed with the experiment's name and the cell's key.
func RunAll(ctx context.Context, e Experiment, cfg Config) ([]Row, error) {
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
