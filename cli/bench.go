package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	simrun "github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/table"
)

func init() { register(benchCommand) }

// Defaults of 'simulate bench': six timed runs of one second each (six
// is the fewest for which benchstat gives an interval), as go test
// -bench -count 6 would time them.
const (
	defaultBenchCount   = 6
	defaultBenchSeconds = 1.0
	maxBenchCount       = 1000
)

// benchRun is one timed run of 'simulate bench'.
type benchRun struct {
	Steps          int64   `json:"steps"`
	Seconds        float64 `json:"seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	StepsPerSecond float64 `json:"steps_per_second"`
	NsPerStep      float64 `json:"ns_per_step"`
	// CPUNsPerStep is the workers' own CPU time per step (null off Linux).
	CPUNsPerStep  float64 `json:"cpu_ns_per_step"`
	MeanEmitted   float64 `json:"mean_emitted"`
	AllocsPerStep float64 `json:"allocs_per_step"`
}

// benchJSON is the JSON form of 'simulate bench': the runs, and the
// summary over them (totals of steps and seconds, medians of the rates,
// the mean emitted tokens and allocations over every step).
type benchJSON struct {
	Algorithm      string     `json:"algorithm"`
	V              int        `json:"V"`
	Gamma          int        `json:"gamma"`
	Workers        int        `json:"workers"`
	Seed           uint64     `json:"seed"`
	Count          int        `json:"count"`
	Steps          int64      `json:"steps"`
	Seconds        float64    `json:"seconds"`
	CPUSeconds     float64    `json:"cpu_seconds"`
	StepsPerSecond float64    `json:"steps_per_second"`
	NsPerStep      float64    `json:"ns_per_step"`
	CPUNsPerStep   float64    `json:"cpu_ns_per_step"`
	MeanEmitted    float64    `json:"mean_emitted"`
	AllocsPerStep  float64    `json:"allocs_per_step"`
	PoolBytes      int64      `json:"pool_bytes"`
	Contexts       int        `json:"contexts"`
	MeanBeta       float64    `json:"mean_beta"`
	Runs           []benchRun `json:"runs"`
}

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure a rule's steps per second on the shared benchmark workload (Dirichlet(0.1) rows, mean beta = 0.70, float32, >=128 MiB pool), over repeated runs with their CPU time",
		Flags: []cli.Flag{
			algoFlag("token"), paramFlag(),
			&cli.IntFlag{Name: "vocab", Aliases: []string{"V"}, Value: 32000, Usage: "vocabulary size V (--V as in source specs' V=)"},
			gammaFlag("draft length gamma"),
			&cli.Float64Flag{Name: "beta", Value: 0.7, Usage: "mean sum min(p,q) the draft is calibrated to"},
			&cli.Float64Flag{Name: "seconds", Value: defaultBenchSeconds, Usage: "timed seconds per run"},
			&cli.IntFlag{Name: "count", Value: defaultBenchCount, Usage: "timed runs (as go test -count), each reported with its wall and CPU time"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json (as --json) or gobench (the 'go test -bench' lines benchstat reads)"},
			&cli.IntFlag{Name: "pool-mib", Value: 128, Usage: "least pool size in MiB (rows are cycled from memory)"},
			kFlag("tree rules: candidates per tree (depth is --gamma)"),
			workersFlag(1), seedFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if _, _, err := benchRepeat(c); err != nil {
				return err
			}
			if algos.IsTree(c.String("algo")) {
				return benchTree(c)
			}
			return benchChain(c)
		},
	}
}

// benchChain times the chain rule --algo names: it validates the flags,
// builds the benchmark pool, times --count runs (benchRuns) and prints
// them.
func benchChain(c *cli.Context) error {
	if c.IsSet("k") {
		return diag.Usage(fmt.Errorf("--k needs a tree rule (specinfer, ...; see 'simulate list'); %s verifies one chain", c.String("algo")))
	}
	e, a, _, err := buildAlgo(c)
	if err != nil {
		return err
	}
	count, dur, _ := benchRepeat(c)
	format, _ := benchFormat(c)
	if c.Int("pool-mib") < 1 {
		return diag.Usage(fmt.Errorf("--pool-mib = %d; use at least 1", c.Int("pool-mib")))
	}
	seed := masterSeed(c)
	cfg := sim.BenchConfig{V: c.Int("vocab"), Gamma: c.Int("gamma"), Beta: c.Float64("beta"), PoolBytes: c.Int("pool-mib") << 20,
		Duration: dur, Workers: c.Int("workers"), Seed: seed}
	if err := cfg.Check(); err != nil {
		return diag.Usage(err)
	}
	fmt.Fprintf(c.App.ErrWriter, "simulate: building the pool (V = %d, gamma = %d, seed %d)...\n", cfg.V, cfg.Gamma, seed)
	ctx, stop := signalContext(c.Context)
	defer stop()
	pl, err := source.BenchPool(ctx, cfg, memBudget(c))
	if err != nil && ctx.Err() != nil {
		return diag.Interrupted(fmt.Errorf("interrupted while building the pool; nothing was timed"))
	}
	if err != nil {
		return diag.Usage(err)
	}
	out := benchJSON{Algorithm: e.Name, V: cfg.V, Gamma: cfg.Gamma, Workers: max(cfg.Workers, 1), Seed: seed}
	if err := benchRuns(ctx, pl, a, cfg, count, &out); err != nil {
		return err
	}
	if werr := printBench(c, format, out); werr != nil {
		return diag.IO(werr)
	}
	if ctx.Err() != nil {
		return diag.Interrupted(fmt.Errorf("interrupted after %d full runs (%.1f s of timing); the runs timed so far are reported", len(out.Runs), out.Seconds))
	}
	return nil
}

// benchRuns times count runs of a on pl into out, with their totals and
// the medians over runs (NaN when no step ran); an interrupt ends the
// runs, keeping those timed so far.
func benchRuns(ctx context.Context, pl *sim.Pool, a sim.Algorithm, cfg sim.BenchConfig, count int, out *benchJSON) error {
	var emitted, allocs float64
	for range count {
		r, err := simrun.Bench(ctx, pl, a, cfg)
		if err != nil && ctx.Err() == nil {
			return diag.Usage(err)
		}
		out.PoolBytes, out.Contexts, out.MeanBeta = r.PoolBytes, r.Contexts, r.MeanBeta
		if r.Steps > 0 {
			out.Runs = append(out.Runs, newBenchRun(r))
			out.Steps += r.Steps
			out.Seconds += r.Seconds
			out.CPUSeconds += r.CPUSeconds
			emitted += r.MeanEmitted * float64(r.Steps)
			allocs += r.AllocsPerStep * float64(r.Steps)
		}
		if ctx.Err() != nil {
			break // the runs timed so far are reported
		}
	}
	out.Count = len(out.Runs)
	out.StepsPerSecond, out.NsPerStep, out.CPUNsPerStep, out.MeanEmitted, out.AllocsPerStep = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if out.Steps > 0 {
		out.StepsPerSecond = median(out.Runs, func(r benchRun) float64 { return r.StepsPerSecond })
		out.NsPerStep = median(out.Runs, func(r benchRun) float64 { return r.NsPerStep })
		out.CPUNsPerStep = median(out.Runs, func(r benchRun) float64 { return r.CPUNsPerStep })
		out.MeanEmitted, out.AllocsPerStep = emitted/float64(out.Steps), allocs/float64(out.Steps)
	}
	return nil
}

// benchRepeat is --count and --seconds, checked.
func benchRepeat(c *cli.Context) (int, time.Duration, error) {
	n := c.Int("count")
	if n < 1 || n > maxBenchCount {
		return 0, 0, diag.Usage(fmt.Errorf("--count = %d; use 1 to %d runs", n, maxBenchCount))
	}
	d, err := benchDuration(c)
	if err != nil {
		return 0, 0, err
	}
	if _, err := benchFormat(c); err != nil {
		return 0, 0, err
	}
	return n, d, nil
}

// benchFormat is --format, with --json as "json".
func benchFormat(c *cli.Context) (string, error) {
	f := c.String("format")
	switch {
	case f != "text" && f != "json" && f != "gobench":
		return "", diag.Usage(fmt.Errorf("--format %q; use text, json or gobench", f))
	case c.Bool("json") && c.IsSet("format") && f != "json":
		return "", diag.Usage(fmt.Errorf("--json and --format %s disagree; give one", f))
	case c.Bool("json"):
		return "json", nil
	}
	return f, nil
}

// newBenchRun is one run's figures from its result.
func newBenchRun(r sim.BenchResult) benchRun {
	br := benchRun{Steps: r.Steps, Seconds: r.Seconds, CPUSeconds: r.CPUSeconds, StepsPerSecond: r.StepsPerSecond,
		NsPerStep: r.Seconds * 1e9 / float64(r.Steps), CPUNsPerStep: math.NaN(), MeanEmitted: r.MeanEmitted, AllocsPerStep: r.AllocsPerStep}
	if r.CPUSeconds > 0 {
		br.CPUNsPerStep = r.CPUSeconds * 1e9 / float64(r.Steps)
	}
	return br
}

// median is the median of f over rs (NaN when every value is NaN).
func median[T any](rs []T, f func(T) float64) float64 {
	var xs []float64
	for _, r := range rs {
		if v := f(r); !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// printBench writes the chain benchmark in format.
func printBench(c *cli.Context, format string, out benchJSON) error {
	w := c.App.Writer
	switch format {
	case "json":
		return cliutil.WriteJSON(w, out)
	case "gobench":
		bw := bufio.NewWriter(w)
		goBenchHeader(bw)
		fmt.Fprintf(bw, "seed: %d\npool-bytes: %d\ncontexts: %d\nmean-beta: %.4f\n", out.Seed, out.PoolBytes, out.Contexts, out.MeanBeta)
		name := fmt.Sprintf("BenchmarkVerify/algo=%s/V=%d/gamma=%d/workers=%d-%d", out.Algorithm, out.V, out.Gamma, out.Workers, runtime.GOMAXPROCS(0))
		for _, r := range out.Runs {
			fmt.Fprintf(bw, "%s\t%d\t%s ns/op\t%s cpu-ns/op\t%s emitted/op\t%s allocs/op\n", name, r.Steps,
				goBenchValue(r.NsPerStep), goBenchValue(r.CPUNsPerStep), goBenchValue(r.MeanEmitted), goBenchValue(r.AllocsPerStep))
		}
		return bw.Flush()
	}
	f := func(v float64, d int) string { return table.Fixed(v, true, d) }
	fmt.Fprintf(w, "%s V=%d gamma=%d workers=%d: pool %d MiB, %d contexts, mean beta %s; %d runs\n",
		out.Algorithm, out.V, out.Gamma, out.Workers, out.PoolBytes>>20, out.Contexts, f(out.MeanBeta, 4), len(out.Runs))
	for i, r := range out.Runs {
		fmt.Fprintf(w, "  run %d: %d steps in %s s wall, %s s CPU: %s steps/s, %s ns/step, %s CPU ns/step; %s emitted/step, %.3g allocs/step\n",
			i+1, r.Steps, f(r.Seconds, 3), f(r.CPUSeconds, 3), f(r.StepsPerSecond, 0), f(r.NsPerStep, 1), f(r.CPUNsPerStep, 1), f(r.MeanEmitted, 4), r.AllocsPerStep)
	}
	lo, hi := math.NaN(), math.NaN()
	for _, r := range out.Runs {
		if math.IsNaN(lo) || r.StepsPerSecond < lo {
			lo = r.StepsPerSecond
		}
		if math.IsNaN(hi) || r.StepsPerSecond > hi {
			hi = r.StepsPerSecond
		}
	}
	fmt.Fprintf(w, "median over %d runs: %s steps/s (min %s, max %s), %s ns/step, %s CPU ns/step; %s emitted/step, %.3g allocs/step\n",
		len(out.Runs), f(out.StepsPerSecond, 0), f(lo, 0), f(hi, 0), f(out.NsPerStep, 1), f(out.CPUNsPerStep, 1), f(out.MeanEmitted, 4), out.AllocsPerStep)
	return nil
}

// goBenchHeader writes the configuration lines 'go test -bench' starts
// with (goos, goarch, pkg, cpu where known).
func goBenchHeader(w io.Writer) {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: github.com/specsim/specsim/cmd/simulate\n", runtime.GOOS, runtime.GOARCH)
	if cpu := simrun.CPUName(); cpu != "" {
		fmt.Fprintf(w, "cpu: %s\n", cpu)
	}
}

// goBenchValue formats a benchmark value as 'go test -bench' does, with
// NaN (a figure not measured here) as 0, which the format allows: it has
// no n/a.
func goBenchValue(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return fmt.Sprintf("%.4g", v)
}

// benchTreeRun is one timed run of a tree rule.
type benchTreeRun struct {
	Trees          int64   `json:"trees"`
	Seconds        float64 `json:"seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	TreesPerSecond float64 `json:"trees_per_second"`
	NsPerTree      float64 `json:"ns_per_tree"`
	CPUNsPerTree   float64 `json:"cpu_ns_per_tree"`
	MeanAccepted   float64 `json:"mean_accepted"`
	MeanNodes      float64 `json:"mean_nodes"`
}

// benchTreeJSON is the JSON form of 'simulate bench' for a tree rule: the
// runs and their summary (totals of trees and seconds, medians of the
// rates).
type benchTreeJSON struct {
	V                 int            `json:"V"`
	K                 int            `json:"k"`
	Depth             int            `json:"depth"`
	Seed              uint64         `json:"seed"`
	Rule              string         `json:"rule"`
	Draft             string         `json:"draft"`
	Count             int            `json:"count"`
	Trees             int64          `json:"trees"`
	Seconds           float64        `json:"seconds"`
	TreesPerSecond    float64        `json:"trees_per_second"`
	CPUSeconds        float64        `json:"cpu_seconds"`
	TreesPerCPUSecond float64        `json:"trees_per_cpu_second"`
	NsPerTree         float64        `json:"ns_per_tree"`
	CPUNsPerTree      float64        `json:"cpu_ns_per_tree"`
	MeanAccepted      float64        `json:"mean_accepted"`
	MeanNodes         float64        `json:"mean_nodes"`
	Runs              []benchTreeRun `json:"runs"`
}

// benchTree is 'simulate bench' for a tree rule: algos.BenchTree on one
// core, K candidates of depth --gamma drawn by the rule's drafter kind,
// --count times.
func benchTree(c *cli.Context) error {
	e, err := algos.LookupTree(c.String("algo"))
	if err != nil {
		return diag.Usage(err)
	}
	ps, err := parseParams(c.StringSlice("param"))
	if err != nil {
		return diag.Usage(err)
	}
	for _, f := range []string{"workers", "pool-mib"} {
		if c.IsSet(f) {
			return diag.Usage(fmt.Errorf("--%s is for chain rules: a tree benchmark times one core on 8 pre-drafted trees", f))
		}
	}
	count, dur, err := benchRepeat(c)
	if err != nil {
		return err
	}
	format, _ := benchFormat(c)
	k, err := givenK(c)
	if err != nil {
		return err
	}
	seed := masterSeed(c)
	cfg := algos.TreeBenchConfig{V: c.Int("vocab"), K: draft.K(k, e.Draft.String()), Depth: c.Int("gamma"), Beta: c.Float64("beta"),
		Duration: dur, Seed: seed, Params: ps, MemBudget: memBudget(c)}
	ctx, stop := signalContext(c.Context)
	defer stop()
	out := benchTreeJSON{V: cfg.V, K: cfg.K, Depth: cfg.Depth, Seed: seed, Rule: e.Name}
	var acc, nodes float64
	for range count {
		r, err := algos.BenchTree(ctx, e, cfg)
		if err != nil && ctx.Err() == nil {
			return diag.Usage(err)
		}
		if r.Trees > 0 {
			out.Rule, out.Draft = r.Rule, r.Draft
			run := benchTreeRun{Trees: r.Trees, Seconds: r.Seconds, CPUSeconds: r.CPUSeconds, TreesPerSecond: r.TreesPerSecond,
				NsPerTree: r.Seconds * 1e9 / float64(r.Trees), CPUNsPerTree: math.NaN(), MeanAccepted: r.MeanAccepted, MeanNodes: r.MeanNodes}
			if r.CPUSeconds > 0 {
				run.CPUNsPerTree = r.CPUSeconds * 1e9 / float64(r.Trees)
			}
			out.Runs = append(out.Runs, run)
			out.Trees += r.Trees
			out.Seconds += r.Seconds
			out.CPUSeconds += r.CPUSeconds
			acc += r.MeanAccepted * float64(r.Trees)
			nodes += r.MeanNodes * float64(r.Trees)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if out.Trees == 0 {
		return diag.Interrupted(fmt.Errorf("interrupted before timing; nothing was timed"))
	}
	out.Count = len(out.Runs)
	out.TreesPerSecond = median(out.Runs, func(r benchTreeRun) float64 { return r.TreesPerSecond })
	out.NsPerTree = median(out.Runs, func(r benchTreeRun) float64 { return r.NsPerTree })
	out.CPUNsPerTree = median(out.Runs, func(r benchTreeRun) float64 { return r.CPUNsPerTree })
	out.TreesPerCPUSecond = math.NaN()
	if out.CPUSeconds > 0 {
		out.TreesPerCPUSecond = float64(out.Trees) / out.CPUSeconds
	}
	out.MeanAccepted, out.MeanNodes = acc/float64(out.Trees), nodes/float64(out.Trees)
	if werr := printBenchTree(c, format, out); werr != nil {
		return diag.IO(werr)
	}
	if ctx.Err() != nil {
		return diag.Interrupted(fmt.Errorf("interrupted after %d full runs (%.1f s of timing); the trees timed so far are reported", len(out.Runs), out.Seconds))
	}
	return nil
}

// printBenchTree writes the tree benchmark in format.
func printBenchTree(c *cli.Context, format string, out benchTreeJSON) error {
	w := c.App.Writer
	switch format {
	case "json":
		return cliutil.WriteJSON(w, out)
	case "gobench":
		bw := bufio.NewWriter(w)
		goBenchHeader(bw)
		fmt.Fprintf(bw, "seed: %d\n", out.Seed)
		name := fmt.Sprintf("BenchmarkVerifyTree/algo=%s/draft=%s/V=%d/k=%d/depth=%d-%d", out.Rule, out.Draft, out.V, out.K, out.Depth, runtime.GOMAXPROCS(0))
		for _, r := range out.Runs {
			fmt.Fprintf(bw, "%s\t%d\t%s ns/op\t%s cpu-ns/op\t%s accepted/op\t%s nodes/op\n", name, r.Trees,
				goBenchValue(r.NsPerTree), goBenchValue(r.CPUNsPerTree), goBenchValue(r.MeanAccepted), goBenchValue(r.MeanNodes))
		}
		return bw.Flush()
	}
	f := func(v float64, d int) string { return table.Fixed(v, true, d) }
	fmt.Fprintf(w, "%s (%s drafts) V=%d k=%d depth=%d: %d runs on one core\n", out.Rule, out.Draft, out.V, out.K, out.Depth, len(out.Runs))
	for i, r := range out.Runs {
		fmt.Fprintf(w, "  run %d: %d trees in %s s wall, %s s CPU: %s trees/s, %s ns/tree, %s CPU ns/tree; %s accepted/tree, %s nodes/tree\n",
			i+1, r.Trees, f(r.Seconds, 3), f(r.CPUSeconds, 3), f(r.TreesPerSecond, 0), f(r.NsPerTree, 1), f(r.CPUNsPerTree, 1), f(r.MeanAccepted, 4), f(r.MeanNodes, 1))
	}
	fmt.Fprintf(w, "median over %d runs: %s trees/s (%s per CPU-second over all runs), %s ns/tree, %s CPU ns/tree; %s accepted/tree, %s nodes/tree\n",
		len(out.Runs), f(out.TreesPerSecond, 0), f(out.TreesPerCPUSecond, 0), f(out.NsPerTree, 1), f(out.CPUNsPerTree, 1), f(out.MeanAccepted, 4), f(out.MeanNodes, 1))
	return nil
}

// benchDuration is --seconds as a duration in (0, 1 h].
func benchDuration(c *cli.Context) (time.Duration, error) {
	s := c.Float64("seconds")
	if !(s > 0) || s > 3600 {
		return 0, diag.Usage(fmt.Errorf("--seconds = %g; use a duration in (0, 3600]", s))
	}
	return time.Duration(s * float64(time.Second)), nil
}
