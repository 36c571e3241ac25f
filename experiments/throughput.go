package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/table"
)

// throughput measures what the rules cost, on the benchmark workload of
// 'simulate bench' (Dirichlet(0.1) rows, mean β = 0.7, float32, cycled
// from memory): for the chain rules, the time per step against V at
// γ = 4 and against γ at V = 32000; for the tree rules, the time per
// tree against the candidates k at depth 4 and V = 4000 (drafting the
// benchmark's trees at V = 32000 took longer than timing them). Each
// setting is timed throughputReps times for throughputSeconds on one
// worker, each run with its own seed (so it starts at other rows and
// draws other coins: runs of one seed replay the same first steps, and
// their spread is not the run-to-run spread). Rows carry the median wall
// and CPU time per step (the worker's own thread, so other cells running
// beside it are not counted), the smallest and largest CPU time of the
// runs, which bracket the median with probability 1 − 2·2^-reps (93.75%
// at 5 runs, distribution-free), the steps per second and the one-minute
// load average when the cell started.
//
// Its rows are timings of this machine, not results of the seed: they
// differ from run to run (Experiment.Timed), and the paper quotes them as
// measurements of the machine it names.

// The rules timed, and the settings.
var (
	throughputChain = []string{"token", "block", "lenience", "mentored", "typical"}
	throughputTree  = []string{"specinfer", "rrs-wor", "kseq", "target-only"}
	throughputVs    = []int64{1000, 4000, 16000, 32000}
	throughputGs    = []int64{1, 2, 4, 8}
	throughputKs    = []int64{2, 4, 8}
)

const (
	throughputReps    = 5
	throughputSeconds = 0.025
	// throughputPoolMiB is the chain pools' least size: past the
	// last-level cache of most machines' one core, so rows come from
	// memory as in 'simulate bench' (whose default is 128 MiB).
	throughputPoolMiB = 32
	throughputV       = 32000
	throughputGamma   = 4
	throughputDepth   = 4
	throughputTreeV   = 4000
)

func init() {
	Register(Experiment{
		Name:    "throughput",
		Main:    85,
		Section: "Throughput and cost",
		Summary: "time per step of the chain rules against V and γ, and per tree of the tree rules against k, on the benchmark workload (timings of this machine)",
		Timed:   true,
		Cells: func(Config) ([]Cell, error) {
			var cells []Cell
			for _, v := range throughputVs {
				cells = append(cells, Cell{Key: []KV{{K: "kind", V: "chain"}, {K: "V", V: v}, {K: "gamma", V: int64(throughputGamma)}, {K: "k", V: int64(1)}}})
			}
			for _, g := range throughputGs {
				if g != throughputGamma {
					cells = append(cells, Cell{Key: []KV{{K: "kind", V: "chain"}, {K: "V", V: int64(throughputV)}, {K: "gamma", V: g}, {K: "k", V: int64(1)}}})
				}
			}
			for _, k := range throughputKs {
				cells = append(cells, Cell{Key: []KV{{K: "kind", V: "tree"}, {K: "V", V: int64(throughputTreeV)}, {K: "gamma", V: int64(throughputDepth)}, {K: "k", V: k}}})
			}
			return cells, nil
		},
		Run: runThroughput,
		Figures: []Figure{{Name: "throughput", Make: func(r []Row) (*plots.Figure, error) {
			return plots.Throughput(r, throughputV, throughputGamma)
		}}},
		Tables: []Table{{Name: "throughput", Make: throughputTable}, {Name: "throughput-trees", Make: throughputTreeTable}},
		Numbers: []table.Number{
			{Macro: "ThroughputToken", Where: throughputAt("token"), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "token: CPU µs per step at V = 32000, γ = 4"},
			{Macro: "ThroughputBlock", Where: throughputAt("block"), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "block: CPU µs per step"},
			{Macro: "ThroughputMentored", Where: throughputAt("mentored"), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "mentored: CPU µs per step"},
			{Macro: "ThroughputTypical", Where: throughputAt("typical"), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "typical: CPU µs per step"},
			{Macro: "ThroughputTokenRate", Where: throughputAt("token"), Col: "steps_per_second", Digits: 0, Doc: "token: steps per second (wall)"},
			{Macro: "ThroughputSpecInfer", Where: []string{"kind", "tree", "rule", "specinfer", "k", "4"}, Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "specinfer: CPU µs per tree, k = 4, depth 4, V = 4000"},
			{Macro: "ThroughputTokenSmallV", Where: throughputAtV("token", 1000, throughputGamma), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "token: CPU µs per step at V = 1000, γ = 4"},
			{Macro: "ThroughputBlockSmallV", Where: throughputAtV("block", 1000, throughputGamma), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "block: CPU µs per step at V = 1000, γ = 4"},
			{Macro: "ThroughputMentoredSmallV", Where: throughputAtV("mentored", 1000, throughputGamma), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "mentored: CPU µs per step at V = 1000, γ = 4"},
			{Macro: "ThroughputTokenGammaOne", Where: throughputAtV("token", throughputV, 1), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "token: CPU µs per step at V = 32000, γ = 1"},
			{Macro: "ThroughputTokenGammaEight", Where: throughputAtV("token", throughputV, 8), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "token: CPU µs per step at V = 32000, γ = 8"},
			{Macro: "ThroughputBlockGammaEight", Where: throughputAtV("block", throughputV, 8), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "block: CPU µs per step at V = 32000, γ = 8"},
			{Macro: "ThroughputSpecInferKTwo", Where: []string{"kind", "tree", "rule", "specinfer", "k", "2"}, Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "specinfer: CPU µs per tree, k = 2"},
			{Macro: "ThroughputSpecInferKEight", Where: []string{"kind", "tree", "rule", "specinfer", "k", "8"}, Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "specinfer: CPU µs per tree, k = 8"},
			{Macro: "ThroughputKseq", Where: []string{"kind", "tree", "rule", "kseq", "k", "4"}, Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "kseq: CPU µs per tree, k = 4"},
			{Macro: "ThroughputCPU", Where: throughputAt("token"), Agg: table.Str, Col: "cpu", Doc: "the machine's processor"},
			{Macro: "ThroughputLoad", Where: throughputAt("token"), Col: "load", Digits: 1, Doc: "the one-minute load average when token's row at V = 32000, γ = 4 was timed"},
			{Macro: "ThroughputReps", Where: throughputAt("token"), Col: "reps", Doc: "timed runs per setting"},
			{Macro: "ThroughputRunSeconds", Where: throughputAt("token"), Col: "run_seconds", Agg: table.Sig, Digits: 2, Doc: "the length of one timed run in seconds"},
			{Macro: "ThroughputTokenLo", Where: throughputAt("token"), Col: "cpu_ns_lo", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "token: the fastest run's CPU µs per step"},
			{Macro: "ThroughputTokenHi", Where: throughputAt("token"), Col: "cpu_ns_hi", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "token: the slowest run's CPU µs per step"},
			{Macro: "ThroughputMentoredGammaTwo", Where: throughputAtV("mentored", throughputV, 2), Col: "cpu_ns_per_step", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "mentored: CPU µs per step at V = 32000, γ = 2"},
			{Macro: "ThroughputMentoredGammaTwoLo", Where: throughputAtV("mentored", throughputV, 2), Col: "cpu_ns_lo", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "mentored at γ = 2: the fastest run"},
			{Macro: "ThroughputMentoredGammaTwoHi", Where: throughputAtV("mentored", throughputV, 2), Col: "cpu_ns_hi", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "mentored at γ = 2: the slowest run"},
			{Macro: "ThroughputMentoredLo", Where: throughputAt("mentored"), Col: "cpu_ns_lo", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "mentored at γ = 4: the fastest run"},
			{Macro: "ThroughputMentoredHi", Where: throughputAt("mentored"), Col: "cpu_ns_hi", Agg: table.Sig, Digits: 3, Scale: 1e-3, Doc: "mentored at γ = 4: the slowest run"},
		},
	})
}

// throughputAt is the throughput row of a chain rule at V = 32000, γ = 4.
func throughputAt(rule string) []string { return throughputAtV(rule, throughputV, throughputGamma) }

// throughputAtV is the throughput row of a chain rule at V and γ = g.
func throughputAtV(rule string, v, g int) []string {
	return []string{"kind", "chain", "rule", rule, "V", fmt.Sprint(v), "gamma", fmt.Sprint(g)}
}

func runThroughput(ctx context.Context, cfg Config, c Cell, seed uint64) ([]Row, error) {
	kind := Row(c.Key).String("kind")
	v, g, k := int(table.Num(Row(c.Key), "V")), int(table.Num(Row(c.Key), "gamma")), int(table.Num(Row(c.Key), "k"))
	// below scale 1 (the tests' tiny runs) the timing and the pool shrink
	// with it: the rows then show the code runs, not what it costs
	scale := min(1, cfg.Scale)
	if scale <= 0 {
		scale = 1
	}
	dur := time.Duration(max(0.005, throughputSeconds*scale) * float64(time.Second))
	poolBytes := max(1<<20, int(float64(throughputPoolMiB<<20)*scale))
	cpu, load := run.CPUName(), run.LoadAverage()
	var rows []Row
	if kind == "tree" {
		for _, name := range throughputTree {
			e, err := algos.LookupTree(name)
			if err != nil {
				return nil, err
			}
			var ns, cpuNs, rate []float64
			var em float64
			for rep := range throughputReps {
				r, err := algos.BenchTree(ctx, e, algos.TreeBenchConfig{V: v, K: k, Depth: g, Beta: 0.7, Duration: dur, Seed: sim.StreamID("throughput/rep", seed, uint64(rep)), MemBudget: cfg.MemBudget})
				if err != nil {
					return rows, err
				}
				ns = append(ns, r.Seconds*1e9/float64(r.Trees))
				cpuNs = append(cpuNs, nanIfZero(r.CPUSeconds)*1e9/float64(r.Trees))
				rate = append(rate, r.TreesPerSecond)
				em = r.MeanAccepted + 1
			}
			rows = append(rows, append(throughputRow(name, ns, cpuNs, rate, em, cpu, load), KV{K: "run_seconds", V: dur.Seconds()}))
		}
		return rows, nil
	}
	bc := sim.BenchConfig{V: v, Gamma: g, Beta: 0.7, PoolBytes: poolBytes, Duration: dur, Workers: 1, Seed: seed}
	pl, err := source.BenchPool(ctx, bc, cfg.MemBudget)
	if err != nil {
		return nil, err
	}
	for _, name := range throughputChain {
		a, err := algos.New(name, nil)
		if err != nil {
			return nil, err
		}
		var ns, cpuNs, rate []float64
		var em float64
		for rep := range throughputReps {
			rc := bc
			rc.Seed = sim.StreamID("throughput/rep", seed, uint64(rep))
			r, err := run.Bench(ctx, pl, a, rc)
			if err != nil {
				return rows, err
			}
			ns = append(ns, r.Seconds*1e9/float64(r.Steps))
			cpuNs = append(cpuNs, nanIfZero(r.CPUSeconds)*1e9/float64(r.Steps))
			rate = append(rate, r.StepsPerSecond)
			em = r.MeanEmitted
		}
		rows = append(rows, append(throughputRow(name, ns, cpuNs, rate, em, cpu, load), KV{K: "run_seconds", V: dur.Seconds()}))
	}
	return rows, nil
}

// throughputRow is one rule's row: the medians over the runs of the wall
// and CPU time per step (or tree) and of the steps per second, the
// smallest and largest CPU time per step of the runs (cpu_ns_lo,
// cpu_ns_hi), the tokens emitted per step, the processor and the load
// average.
func throughputRow(rule string, ns, cpuNs, rate []float64, emitted float64, cpu string, load float64) Row {
	lo, hi := math.NaN(), math.NaN()
	for _, x := range cpuNs {
		if !math.IsNaN(x) {
			lo, hi = nanMin(lo, x), nanMax(hi, x)
		}
	}
	return Row{{K: "rule", V: rule}, {K: "ns_per_step", V: medianOf(ns)}, {K: "cpu_ns_per_step", V: medianOf(cpuNs)},
		{K: "cpu_ns_lo", V: lo}, {K: "cpu_ns_hi", V: hi},
		{K: "steps_per_second", V: medianOf(rate)}, {K: "emitted_per_step", V: emitted}, {K: "reps", V: int64(len(ns))}, {K: "cpu", V: cpu}, {K: "load", V: load}}
}

// nanMin and nanMax are math.Min and math.Max with NaN meaning "none
// yet": the other argument.
func nanMin(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return math.Min(a, b)
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return math.Max(a, b)
}

// medianCoverage is the probability that the smallest and largest of n
// independent runs bracket the runs' median time: 1 − 2·2^-n.
func medianCoverage(n int) float64 { return 1 - 2*math.Pow(0.5, float64(n)) }

// nanIfZero is x, or NaN (not measured) where it is 0: CPU time off Linux.
func nanIfZero(x float64) float64 {
	if x == 0 {
		return math.NaN()
	}
	return x
}

// medianOf is the median of xs, NaN values left out (NaN when none is
// left).
func medianOf(xs []float64) float64 {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// throughputTable is throughput's table of the chain rules: one row per
// rule, the worker's CPU time per step in µs against V at γ = 4 and
// against γ at V = 32000 (the rows hold the wall time and the steps per
// second too).
func throughputTable(rows []Row) table.Text {
	t := table.Text{Caption: fmt.Sprintf("Cost of the chain rules on the benchmark workload (Dirichlet(0.1) rows, mean β = 0.7, float32, a %d MiB pool cycled from memory; one worker): the worker's CPU time per step in µs, the median of %d runs of %.2g s each with its own seed and, in brackets, the smallest and largest run (a %.1f%% distribution-free interval for the median), against V at γ = %d and against γ at V = %d. "+
		"Timings of one processor (%s) at a one-minute load average of %s: they differ from machine to machine and with the load.", throughputPoolMiB, throughputReps, throughputSeconds, 100*medianCoverage(throughputReps), throughputGamma, throughputV, cpuOf(rows), loadOf(rows)),
		Header: []string{"rule"}}
	type col struct{ v, g int64 }
	var cols []col
	for _, v := range throughputVs {
		cols = append(cols, col{v, throughputGamma})
		t.Header = append(t.Header, fmt.Sprintf("V = %d", v))
	}
	for _, g := range throughputGs {
		if g != throughputGamma {
			cols = append(cols, col{throughputV, g})
			t.Header = append(t.Header, fmt.Sprintf("γ = %d", g))
		}
	}
	t.Right = table.RightCols(len(t.Header))
	for i := 1; i < len(t.Header); i++ {
		t.Right[i] = true
	}
	for _, name := range throughputChain {
		line := []string{name}
		for _, c := range cols {
			line = append(line, withRange(table.Find(rows, "kind", "chain", "rule", name, "V", fmt.Sprint(c.v), "gamma", fmt.Sprint(c.g))))
		}
		t.Rows = append(t.Rows, line)
	}
	return t
}

// throughputTreeTable is throughput's table of the tree rules: the CPU
// time per tree of depth 4 in µs against the candidates k. (The rows'
// tokens emitted per tree are the mean over the benchmark's few cycled
// trees, not an acceptance estimate, and are left out.)
func throughputTreeTable(rows []Row) table.Text {
	t := table.Text{Caption: fmt.Sprintf("Cost of the tree rules on the benchmark workload at V = %d: the CPU time per verified tree of depth %d in µs against the candidates k, the median of %d runs of %.2g s over pre-drafted trees, each with its own seed, and in brackets the smallest and largest run (a %.1f%% interval for the median). Timings of one processor (%s) at a load average of %s.",
		throughputTreeV, throughputDepth, throughputReps, throughputSeconds, 100*medianCoverage(throughputReps), cpuOf(rows), loadOf(rows)),
		Header: []string{"rule"}}
	for _, k := range throughputKs {
		t.Header = append(t.Header, fmt.Sprintf("k = %d", k))
	}
	t.Right = table.RightCols(len(t.Header))
	for i := 1; i < len(t.Header); i++ {
		t.Right[i] = true
	}
	for _, name := range throughputTree {
		line := []string{name}
		for _, k := range throughputKs {
			line = append(line, withRange(table.Find(rows, "kind", "tree", "rule", name, "k", fmt.Sprint(k))))
		}
		t.Rows = append(t.Rows, line)
	}
	return t
}

// microseconds is a row's CPU time per step in µs to three significant
// digits, written without an exponent (0.848, 6.04, 127, 4488), NA without
// the row or the time.
func microseconds(r Row) string { return microsecondsOf(r, "cpu_ns_per_step") }

// microsecondsOf is column col of r (a time in ns) in µs to three
// significant digits (table.Significant), NA without the row or the time.
func microsecondsOf(r Row, col string) string {
	if r == nil {
		return NA
	}
	v, ok := r.Float(col)
	return table.Significant(v/1e3, ok, 3)
}

// withRange is a row's median CPU time per step in µs followed by the
// runs' smallest and largest, "6.04 (5.90–6.31)"; the median alone where
// the row has no range (a single run).
func withRange(r Row) string {
	m := microseconds(r)
	lo, hi := microsecondsOf(r, "cpu_ns_lo"), microsecondsOf(r, "cpu_ns_hi")
	if m == NA || lo == NA || hi == NA {
		return m
	}
	return m + " (" + lo + "–" + hi + ")"
}

// loadOf is the range of the load averages the rows were timed at, "3.1"
// or "2.0–6.5" (NA where none was read).
func loadOf(rows []Row) string {
	lo, hi := math.NaN(), math.NaN()
	for _, r := range rows {
		if v, ok := r.Float("load"); ok && !math.IsNaN(v) {
			lo, hi = nanMin(lo, v), nanMax(hi, v)
		}
	}
	if math.IsNaN(lo) {
		return NA
	}
	if s, t := table.Fixed(lo, true, 1), table.Fixed(hi, true, 1); s != t {
		return s + "–" + t
	}
	return table.Fixed(lo, true, 1)
}

// cpuOf is the processor named by the rows (NA where none is).
func cpuOf(rows []Row) string {
	for _, r := range rows {
		if c := r.String("cpu"); c != "" {
			return c
		}
	}
	return NA
}
