package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
)

func init() { register(runCommand) }

// runSummary is the JSON form of 'simulate run --out'. Field names are
// stable.
type runSummary struct {
	Experiment string  `json:"experiment"`
	SpecHash   string  `json:"spec_hash"`
	Seed       uint64  `json:"seed"`
	Shard      string  `json:"shard"`
	Cells      int     `json:"cells"`       // cells of the whole sweep
	ShardCells int     `json:"shard_cells"` // cells owned by this shard
	Computed   int     `json:"computed"`
	Skipped    int     `json:"skipped"`
	Out        string  `json:"out"`
	Seconds    float64 `json:"seconds"`
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run a named experiment or a sweep spec (TOML): print its rows, or store them cell by cell with --out",
		Description: `NAME is a registered experiment (simulate list shows them); SPEC is a TOML
sweep spec (see experiments/specs/). Without --out the rows are printed.
With --out DIR each finished cell is written atomically to DIR/cells/; a
re-run computes only the missing cells (SIGINT/SIGTERM keep the finished
ones, exit code 4). The shard defaults from SLURM_ARRAY_TASK_ID and
SLURM_ARRAY_TASK_COUNT (Slurm job arrays) or JOB_COMPLETION_INDEX with
SPECSIM_SHARD_COUNT (Kubernetes indexed jobs).`,
		ArgsUsage: "NAME|SPEC",
		Flags: []cli.Flag{
			seedFlag(), workersFlag(0), jsonFlag(),
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "multiply the default trial counts (overrides the spec's scale)"},
			&cli.StringFlag{Name: "out", Usage: "store finished cells as parquet files under `DIR` (resumable)"},
			&cli.StringFlag{Name: "shard", Usage: "run only shard `i/n` (0-based): the cells whose index ≡ i mod n"},
			&cli.IntFlag{Name: "shard-count", EnvVars: []string{experiments.EnvShardCount}, Usage: "shard count paired with JOB_COMPLETION_INDEX"},
			&cli.DurationFlag{Name: "progress-every", Value: 10 * time.Second, Usage: "interval of the plain progress lines (stderr not a terminal)"},
		},
		Action: runAction,
	}
}

// loadSpec resolves NAME|SPEC: an existing file or a *.toml argument is a
// spec, anything else a registered experiment's own grid.
func loadSpec(arg string) (*experiments.SweepSpec, error) {
	if _, err := os.Stat(arg); err == nil || strings.HasSuffix(arg, ".toml") {
		s, err := experiments.LoadSpec(arg)
		if err != nil {
			return nil, cliutil.Usage(err)
		}
		return s, nil
	}
	s, err := experiments.DefaultSpec(arg)
	if err != nil {
		return nil, cliutil.Usage(err)
	}
	return s, nil
}

// resolveSeed picks the master seed: --seed, then the spec's, then the
// seed recorded in --out's manifest (so a resume needs no flag), then the
// clock.
func resolveSeed(c *cli.Context, spec *experiments.SweepSpec, out string) (uint64, error) {
	if s := c.Uint64("seed"); s != 0 {
		return s, nil
	}
	if spec.Seed != 0 {
		return spec.Seed, nil
	}
	if out != "" {
		m, ok, err := results.ReadManifest(out)
		if err != nil {
			return 0, cliutil.IO(err)
		}
		if ok {
			return m.Seed, nil
		}
	}
	return masterSeed(c), nil
}

// resolveShard reads --shard, else the environment.
func resolveShard(c *cli.Context) (experiments.Shard, error) {
	if s := c.String("shard"); s != "" {
		return experiments.ParseShard(s)
	}
	getenv := os.Getenv
	if c.IsSet("shard-count") {
		getenv = func(k string) string {
			if k == experiments.EnvShardCount {
				return fmt.Sprint(c.Int("shard-count"))
			}
			return os.Getenv(k)
		}
	}
	s, _, err := experiments.ShardFromEnv(getenv)
	return s, err
}

func runAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usage(fmt.Errorf("run needs one experiment name or spec file; known experiments: %s", strings.Join(experiments.Names(), ", ")))
	}
	spec, err := loadSpec(c.Args().First())
	if err != nil {
		return err
	}
	if c.IsSet("scale") || spec.Scale == 0 {
		s := c.Float64("scale")
		if !(s > 0) {
			return cliutil.Usage(fmt.Errorf("--scale = %g; use a positive factor", s))
		}
		spec.Scale = s
	}
	if w := c.Int("workers"); w < 0 {
		return cliutil.Usage(fmt.Errorf("--workers = %d; use 0 (all cores) or more", w))
	}
	workers := c.Int("workers")
	if workers == 0 {
		workers = runtime.NumCPU()
	}
	shard, err := resolveShard(c)
	if err != nil {
		return cliutil.Usage(err)
	}
	out := c.String("out")
	seed, err := resolveSeed(c, spec, out)
	if err != nil {
		return err
	}
	plan, err := experiments.NewPlan(spec, seed)
	if err != nil {
		return cliutil.Usage(err)
	}
	errw := c.App.ErrWriter
	fmt.Fprintf(errw, "simulate: experiment %s, seed %d, spec %.12s, shard %s, %d cells, %d workers\n",
		plan.Exp.Name, seed, spec.Hash(), shard, len(plan.Cells), workers)
	ctx, stop := signalContext(c.Context)
	defer stop()
	opt := experiments.SweepOptions{Shard: shard, Workers: workers}
	var dir *results.Dir
	if out != "" {
		if dir, err = results.OpenDir(out, plan, shard); err != nil {
			return cliutil.IO(err)
		}
		opt.Store = dir
	}
	owned := 0
	for i := range plan.Cells {
		if shard.Owns(i) {
			owned++
		}
	}
	prog := newCellProgress(errw, owned, c.Duration("progress-every"))
	opt.Progress = prog.update
	start := time.Now()
	res, err := plan.Run(ctx, opt)
	prog.finish(res)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			if out != "" {
				return cliutil.Interrupted(fmt.Errorf("interrupted: %d cells computed and kept in %s (%d were already there); run the same command again to compute the rest", res.Computed, out, res.Skipped))
			}
			return cliutil.Interrupted(fmt.Errorf("interrupted after %d of %d cells; nothing was stored (use --out DIR to keep finished cells)", res.Computed, owned))
		}
		var ue interface{ ExitCode() int }
		if errors.As(err, &ue) {
			return err
		}
		if strings.Contains(err.Error(), "unreadable cell file") || strings.Contains(err.Error(), "metadata") {
			return cliutil.IO(err)
		}
		if out != "" && isIOErr(err) {
			return cliutil.IO(err)
		}
		return cliutil.Usage(err)
	}
	if out != "" {
		sum := runSummary{Experiment: plan.Exp.Name, SpecHash: spec.Hash(), Seed: seed, Shard: shard.String(), Cells: len(plan.Cells),
			ShardCells: owned, Computed: res.Computed, Skipped: res.Skipped, Out: out, Seconds: time.Since(start).Seconds()}
		fmt.Fprintf(errw, "simulate: shard %s done: %d cells computed, %d already stored, in %s\n", shard, res.Computed, res.Skipped, out)
		if c.Bool("json") {
			return cliutil.WriteJSON(c.App.Writer, sum)
		}
		return nil
	}
	rows := res.Rows
	for i := range rows {
		rows[i] = append(rows[i], experiments.KV{K: "seed", V: int64(seed)})
	}
	if c.Bool("json") {
		if rows == nil {
			rows = []experiments.Row{}
		}
		return cliutil.WriteJSON(c.App.Writer, rows)
	}
	return cliutil.PrintRows(c.App.Writer, rows)
}

// isIOErr reports file-system errors.
func isIOErr(err error) bool {
	var pe *os.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le)
}

// cellProgress reports finished cells: a bar with ETA on a terminal, plain
// lines at most every `every` otherwise (as in a batch job's log).
type cellProgress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	every time.Duration
	last  time.Time
	total int
}

func newCellProgress(w io.Writer, total int, every time.Duration) *cellProgress {
	p := &cellProgress{w: w, every: every, total: total, last: time.Now()}
	if isTerminal(w) && total > 0 {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("cells"),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	return p
}

func (p *cellProgress) update(s experiments.SweepProgress) {
	if p.bar != nil {
		if s.Done == 1 && s.Skipped > 0 {
			p.bar.Add(s.Skipped)
		}
		p.bar.Add(1)
		return
	}
	if time.Since(p.last) < p.every && s.Done+s.Skipped < s.Total {
		return
	}
	p.last = time.Now()
	left := s.Total - s.Skipped - s.Done
	eta := "?"
	if s.Done > 0 {
		eta = (time.Duration(float64(s.Elapsed) / float64(s.Done) * float64(left))).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "simulate: %s %d/%d cells (%d skipped), elapsed %s, eta %s\n", time.Now().Format("15:04:05"),
		s.Done+s.Skipped, s.Total, s.Skipped, s.Elapsed.Round(time.Second), eta)
}

func (p *cellProgress) finish(experiments.SweepResult) {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
