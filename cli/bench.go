package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	simrun "github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
)

func init() { register(benchCommand) }

// benchJSON is the JSON form of 'simulate bench'.
type benchJSON struct {
	Algorithm      string  `json:"algorithm"`
	V              int     `json:"V"`
	Gamma          int     `json:"gamma"`
	Workers        int     `json:"workers"`
	Seed           uint64  `json:"seed"`
	Steps          int64   `json:"steps"`
	Seconds        float64 `json:"seconds"`
	StepsPerSecond float64 `json:"steps_per_second"`
	MeanEmitted    float64 `json:"mean_emitted"`
	AllocsPerStep  float64 `json:"allocs_per_step"`
	PoolBytes      int64   `json:"pool_bytes"`
	Contexts       int     `json:"contexts"`
	MeanBeta       float64 `json:"mean_beta"`
}

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure a rule's steps per second on the shared benchmark workload (Dirichlet(0.1) rows, mean beta = 0.70, float32, >=128 MiB pool)",
		Flags: []cli.Flag{
			algoFlag("token"), paramFlag(),
			&cli.IntFlag{Name: "vocab", Aliases: []string{"V"}, Value: 32000, Usage: "vocabulary size V (--V as in source specs' V=)"},
			gammaFlag("draft length gamma"),
			&cli.Float64Flag{Name: "beta", Value: 0.7, Usage: "mean sum min(p,q) the draft is calibrated to"},
			&cli.Float64Flag{Name: "seconds", Value: 5, Usage: "timed seconds"},
			&cli.IntFlag{Name: "pool-mib", Value: 128, Usage: "least pool size in MiB (rows are cycled from memory)"},
			&cli.IntFlag{Name: "k", Value: 4, Usage: "tree rules: candidates per tree (depth is --gamma)"},
			workersFlag(1), seedFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if algos.IsTree(c.String("algo")) {
				return benchTree(c)
			}
			if c.IsSet("k") {
				return diag.Usage(fmt.Errorf("--k needs a tree rule (specinfer, ...; see 'simulate list'); %s verifies one chain", c.String("algo")))
			}
			e, a, _, err := buildAlgo(c)
			if err != nil {
				return err
			}
			dur, err := benchDuration(c)
			if err != nil {
				return err
			}
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
			r, err := simrun.Bench(ctx, pl, a, cfg)
			if err != nil && ctx.Err() == nil {
				return diag.Usage(err)
			}
			// Interrupted while timing: the steps timed so far are reported,
			// then exit 4.
			out := benchJSON{Algorithm: e.Name, V: cfg.V, Gamma: cfg.Gamma, Workers: max(cfg.Workers, 1), Seed: seed, Steps: r.Steps, Seconds: r.Seconds,
				StepsPerSecond: r.StepsPerSecond, MeanEmitted: r.MeanEmitted, AllocsPerStep: r.AllocsPerStep, PoolBytes: r.PoolBytes,
				Contexts: r.Contexts, MeanBeta: r.MeanBeta}
			if werr := printResult(c, out, func(w io.Writer) {
				fmt.Fprintf(w, "%s V=%d gamma=%d workers=%d: %.0f steps/s, %.4f emitted/step, %.3g allocs/step (pool %d MiB, %d contexts, mean beta %.4f)\n",
					out.Algorithm, out.V, out.Gamma, out.Workers, out.StepsPerSecond, out.MeanEmitted, out.AllocsPerStep, out.PoolBytes>>20, out.Contexts, out.MeanBeta)
			}); werr != nil {
				return diag.IO(werr)
			}
			if ctx.Err() != nil {
				return diag.Interrupted(fmt.Errorf("interrupted after %.1f s of timing; the steps timed so far are reported", r.Seconds))
			}
			return nil
		},
	}
}

// benchTreeJSON is the JSON form of 'simulate bench' for a tree rule.
type benchTreeJSON struct {
	V     int    `json:"V"`
	K     int    `json:"k"`
	Depth int    `json:"depth"`
	Seed  uint64 `json:"seed"`
	algos.TreeBenchResult
}

// benchTree is 'simulate bench' for a tree rule: algos.BenchTree on one
// core, K candidates of depth --gamma drawn by the rule's drafter kind.
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
	dur, err := benchDuration(c)
	if err != nil {
		return err
	}
	seed := masterSeed(c)
	cfg := algos.TreeBenchConfig{V: c.Int("vocab"), K: c.Int("k"), Depth: c.Int("gamma"), Beta: c.Float64("beta"),
		Duration: dur, Seed: seed, Params: ps, MemBudget: memBudget(c)}
	ctx, stop := signalContext(c.Context)
	defer stop()
	r, err := algos.BenchTree(ctx, e, cfg)
	if err != nil && ctx.Err() == nil {
		return diag.Usage(err)
	}
	if r.Trees == 0 {
		return diag.Interrupted(fmt.Errorf("interrupted before timing; nothing was timed"))
	}
	out := benchTreeJSON{V: cfg.V, K: cfg.K, Depth: cfg.Depth, Seed: seed, TreeBenchResult: r}
	if werr := printResult(c, out, func(w io.Writer) {
		fmt.Fprintf(w, "%s (%s drafts) V=%d k=%d depth=%d: %.0f trees/s (%.0f per CPU-second), %.4f accepted/tree, %.1f nodes/tree\n",
			r.Rule, r.Draft, cfg.V, cfg.K, cfg.Depth, r.TreesPerSecond, r.TreesPerCPUSecond, r.MeanAccepted, r.MeanNodes)
	}); werr != nil {
		return diag.IO(werr)
	}
	if ctx.Err() != nil {
		return diag.Interrupted(fmt.Errorf("interrupted after %.1f s of timing; the trees timed so far are reported", r.Seconds))
	}
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
