package cli

import (
	"fmt"
	"github.com/specsim/specsim/resolve"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/external"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/source"
)

// externalFlags are the flags 'simulate check' takes for an external
// implementation (--external and the flags that only apply to it).
func externalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "external", Usage: "check an implementation outside this program: a command (run with /bin/sh -c) that speaks the external protocol, e.g. \"python3 -m specsim_ext mymodule:verify\" (see docs/external.md)"},
		&cli.StringFlag{Name: "mode", Value: external.Verify, Usage: "with --external: verify (the harness samples the drafts), step (the implementation drafts for itself from the pool's logits or the model the harness ships; the emitted tokens are judged) or tree (the harness drafts a token tree with --draft, --k, --branch; the implementation verifies it)"},
		&cli.StringFlag{Name: "rows", Usage: "with --external: compose batches like a serving engine's: row kinds separated by ';', each of greedy, seeded, t=T, top_k=K, top_p=P, min_p=M, gamma=G, branch=BxB (tree mode) (e.g. \"greedy;t=0.7,top_k=50,seeded;t=1,gamma=2\"), or \"engine\" for " + external.EngineRows + "; each row is judged against its own transformed target law, seeded rows also for determinism (pool sources; every mode); every test is also reported per row kind (row_kinds)"},
		&cli.IntFlag{Name: "batch", Value: external.DefaultBatch, Usage: "with --external: steps per batch (independent sequences per call)"},
		&cli.DurationFlag{Name: "timeout", Value: external.DefaultTimeout, Usage: "with --external: the longest wait for one answer; the implementation is killed after it"},
		&cli.Float64Flag{Name: "temperature", Value: 1, Usage: "with --external: sampling temperature passed to a function with a fourth parameter; the target law is transformed the same way"},
		&cli.IntFlag{Name: "top-k", Usage: "with --external: top-k (0: off)"},
		&cli.Float64Flag{Name: "top-p", Value: 1, Usage: "with --external: top-p (1: off)"},
		&cli.Float64Flag{Name: "min-p", Usage: "with --external: min-p (0: off)"},
	}
}

// batchStepBytes is what one step of a batch costs the harness and the
// implementation together, beyond its rows (block headers, draft and
// outcome slices, the frames' NumPy arrays): measured about 1.3 KB at
// V = 4 and γ = 4, with a margin.
const batchStepBytes = 2048

// batchValueBytes is what one probability of a batch's rows costs (the
// block's float64, the float32 frame and its bytes, the implementation's
// copy): measured about 24 bytes, with a margin.
const batchValueBytes = 32

// checkBatchMem refuses a batch whose rows would not fit the memory
// budget before the implementation is started: batch steps of 2γ+1 rows
// of V probabilities each (--batch 1048576 on a model pair took 8 GB).
func checkBatchMem(src sim.Source, gamma, batch int, budget int64) error {
	v := 0
	if pl, ok := sim.PoolOf(src.BlockSource); ok {
		v, gamma = pl.V, pl.Gamma
	} else if pr, ok := sim.PairOf(src.BlockSource); ok {
		v = pr.P.Vocab()
	}
	if v == 0 || batch < 1 {
		return nil // the source or batch is refused with its reason later
	}
	need := sim.MulBytes(int64(batch), batchStepBytes+sim.MulBytes(int64(2*gamma+1), int64(v), batchValueBytes))
	return sim.CheckMem(fmt.Sprintf("a batch of %d steps (gamma = %d, V = %d)", batch, gamma, v), need, budget, "use a smaller --batch")
}

// externalJSON is the JSON form of 'simulate check --external': the
// external report and the next steps.
type externalJSON struct {
	external.Report
	Next []nextStep `json:"next"`
}

// checkExternal is 'simulate check --external CMD': it builds the source
// as check does and calls external.Run.
func checkExternal(c *cli.Context) error {
	cfg, src, err := externalCheck(c, masterSeed(c))
	if err != nil {
		return err
	}
	seed := cfg.Check.Seed
	ctx, stop := signalContext(c.Context)
	defer stop()
	bar := newHeaded(c.App.ErrWriter, fmt.Sprintf("simulate: check --external %q (%s mode), seed %d", cfg.Command, cfg.Mode, seed), cfg.Check.Trials, "trials")
	cost := &costModel{start: time.Now()}
	cfg.Check.Progress = func(done, total int64) { cost.progress(done); bar.update(done, total) }
	rep, err := external.Run(ctx, src, cfg)
	bar.done(err != nil && ctx.Err() == nil)
	if err != nil && ctx.Err() == nil {
		return err // usage errors are marked by external.Run
	}
	if ctx.Err() != nil && (rep.Verdict == "" || err != nil) {
		// also when Ctrl-C came before the first batch; not when it came
		// while the implementation was closing, after every answer was
		// in (the verdict and its exit code stand, with a note)
		rep.Interrupted = true
	}
	if err := printExternal(c, rep, newInvocation(c, cfg.Mode == external.Tree, rep.Draft, *cost)); err != nil {
		return err
	}
	return checkExit(rep.Interrupted, rep.Implementation, rep.Report, cfg.Check.Trials)
}

// externalCheck reads an external check's configuration and builds its
// source from c's flags with the master seed seed.
func externalCheck(c *cli.Context, seed uint64) (external.RunConfig, sim.Source, error) {
	if d := c.Duration("timeout"); d <= 0 {
		// honoured exactly or refused: 0s and -5s fell back to the
		// default 60s without a word
		return external.RunConfig{}, sim.Source{}, diag.Usage(fmt.Errorf("--timeout = %v; give a positive duration such as 30s (the longest wait for one answer)", d))
	}
	src, err := externalSource(c, seed)
	if err != nil {
		return external.RunConfig{}, src, err
	}
	cfg, err := externalConfig(c, seed)
	return cfg, src, err
}

// externalSource builds the source of an external check: a context-free
// pair from -p/-q, or --source, refused before it is built where its
// per-state tallies or a batch of its rows would not fit the budget.
func externalSource(c *cli.Context, seed uint64) (sim.Source, error) {
	gamma := c.Int("gamma")
	var src sim.Source
	if c.IsSet("p") || c.IsSet("q") {
		pr, err := pairFromFlags(c, seed)
		if err != nil {
			return src, err
		}
		ch, err := sim.NewChain(pr, gamma)
		if err != nil {
			return src, diag.Usage(err)
		}
		src = sim.Source{Spec: "fixed", BlockSource: ch}
	} else {
		if gamma < 1 || gamma > sim.MaxGamma {
			return src, diag.Usage(fmt.Errorf("--gamma = %d; use 1 <= gamma <= %d", gamma, sim.MaxGamma))
		}
		if states, v, ok := source.States(c.String("source"), gamma, memBudget(c)); ok && c.String("conform") == "" {
			// refuse a check whose per-state tallies cannot fit before
			// drawing its pair
			if err := check.ReserveStateTallies(states, v, gamma, 0, memBudget(c)); err != nil {
				return src, diag.Usage(err)
			}
		}
		var err error
		if src, err = source.New(c.String("source"), gamma, seed, memBudget(c)); err != nil {
			return src, diag.Usage(err)
		}
	}
	// the edge-case batches have external.EdgeRows rows whatever --batch is
	if err := checkBatchMem(src, gamma, max(c.Int("batch"), external.EdgeRows), memBudget(c)); err != nil {
		return src, diag.Usage(err)
	}
	return src, nil
}

// externalConfig reads the run's configuration from the flags, refusing
// those that do not apply to the chosen mode.
func externalConfig(c *cli.Context, seed uint64) (external.RunConfig, error) {
	ps, err := parseParams(c.StringSlice("param"))
	if err != nil {
		return external.RunConfig{}, diag.Usage(err)
	}
	if len(ps) > 0 && c.String("conform") == "" {
		return external.RunConfig{}, diag.Usage(fmt.Errorf("--param with --external sets the parameters of the --conform rule; give --conform NAME (an external implementation takes no parameters from the harness)"))
	}
	cfg := external.RunConfig{
		Config: external.Config{Command: c.String("external"), Mode: c.String("mode"), Timeout: c.Duration("timeout")},
		Check: check.Config{Gamma: c.Int("gamma"), Trials: c.Int64("trials"), Seconds: c.Float64("seconds"), Batch: c.Int("batch"), Profile: c.String("report") != "",
			Seed: seed, Level: c.Float64("level"), Power: c.Float64("power")},
		Conform: c.String("conform"), ConformParams: ps, TreeDraft: c.String("draft"),
	}
	cfg.MemBudget = memBudget(c)
	if cfg.K, err = givenK(c); err != nil {
		return cfg, err
	}
	if c.IsSet("branch") {
		b, err := parseBranch(c.String("branch"))
		if err != nil {
			return cfg, diag.Usage(err)
		}
		cfg.Branch = b
	}
	if c.IsSet("delay") {
		return cfg, diag.Usage(fmt.Errorf("--delay configures the in-process %s drafter; --external tree mode drafts its trees without it: drop --delay, or check the rule in-process", draft.DraftDelayed))
	}
	if (c.IsSet("k") || c.IsSet("draft") || c.IsSet("branch")) && cfg.Mode != external.Tree {
		return cfg, diag.Usage(fmt.Errorf("--k, --draft and --branch configure the drafter of --mode tree; this is --mode %s", cfg.Mode))
	}
	if c.IsSet("rows") {
		rows, err := external.ParseRows(c.String("rows"))
		if err != nil {
			return cfg, diag.Usage(fmt.Errorf("--rows: %v", err))
		}
		cfg.Rows = rows
	}
	if c.IsSet("temperature") || c.IsSet("top-k") || c.IsSet("top-p") || c.IsSet("min-p") {
		cfg.Sampling = &external.Sampling{Temperature: c.Float64("temperature"), TopK: c.Int("top-k"), TopP: c.Float64("top-p"), MinP: c.Float64("min-p")}
	}
	return cfg, nil
}

// printExternal prints an external check's report (text or JSON, with
// its next steps) and writes its report page where --report asks.
func printExternal(c *cli.Context, rep external.Report, inv invocation) error {
	out := newCheckJSON(rep.Report, rep.Elapsed, inv)
	if err := printResult(c, externalJSON{rep, out.Next}, func(w io.Writer) {
		printCheck(w, out)
		for _, comp := range rep.Components {
			fmt.Fprintf(w, "component %s: %s (%s)\n", escape.Line(comp.Name), comp.Verdict, escape.Line(comp.Detail))
		}
		fmt.Fprintf(w, "external %s (%s mode, protocol %d, batch %d): %.0f steps/s\n", escape.Line(rep.Implementation), rep.ExternalMode, rep.Protocol, rep.Batch, rep.StepsPerSecond)
	}); err != nil {
		return err
	}
	if dir := c.String("report"); dir != "" {
		files, err := resolve.WriteReport(dir, rep.Report)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "simulate: report written: %s\n", strings.Join(files, ", "))
	}
	return nil
}
