package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/lm"
	"github.com/specsim/specsim/seq"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/table"
)

func init() { register(generateCommand) }

func generateCommand() *cli.Command {
	return &cli.Command{
		Name:  "generate",
		Usage: "whole generations on real-text n-gram pairs: tokens per target call, speedup, and a sequence-level losslessness verdict",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "target", Value: "code:order=6,cache=0.5", Usage: "target model: code|prose:order=N,cache=lambda,match=M,T=t,frac=f,V=vocab,bytes=B,root=DIR"},
			&cli.StringFlag{Name: "draft", Value: "order=2", Usage: "draft model (shares the target's corpus and tokenizer): order=N,cache=lambda,T=t,frac=f"},
			&cli.StringFlag{Name: "drafter", Value: draft.ChainName, Usage: "drafter: " + strings.Join(seq.DrafterNames(), ", ") + " (tree: the tree drafter of the --algo tree rule's kind)"},
			algoFlag("token"), paramFlag(),
			gammaFlag("draft length gamma (the cap for conf/oracle; the tree's depth)"),
			kFlag("tree drafter: children kept per layer (EAGLE-2) or chains/branching"),
			&cli.IntFlag{Name: "max-ngram", Value: 3, Usage: "lookup drafter: max_ngram_size"},
			&cli.StringFlag{Name: "policy", Value: "fixed", Usage: "draft length: fixed, conf:THRESHOLD or oracle"},
			&cli.IntFlag{Name: "prompts", Value: 16, Usage: "number of prompts (cut from held-out files)"},
			&cli.IntFlag{Name: "prompt-len", Value: 128, Usage: "prompt length in tokens"},
			&cli.IntFlag{Name: "tokens", Value: 1000, Usage: "new tokens per prompt"},
			&cli.Float64Flag{Name: "cost", Value: 0.05, Usage: "c: draft cost per forward pass, in target passes"},
			&cli.Float64Flag{Name: "verify-cost", Value: 0, Usage: "v: extra target cost per verified row beyond the first"},
			&cli.Float64Flag{Name: "level", Value: check.DefaultLevel, Usage: "family-wise significance level of the verdict"},
			&cli.Float64Flag{Name: "power", Value: check.DefaultPower, Usage: "power at which min_detectable_tv is reported"},
			&cli.StringFlag{Name: "cache", Value: lm.DefaultCacheDir(), Usage: "directory of trained models (empty: no disk cache)"},
			workersFlag(0), seedFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if err := generateApplies(c); err != nil {
				return err
			}
			ps, err := parseParams(c.StringSlice("param"))
			if err != nil {
				return diag.Usage(err)
			}
			pol, err := draft.ParsePolicy(c.String("policy"))
			if err != nil {
				return diag.Usage(err)
			}
			k, err := givenK(c)
			if err != nil {
				return err
			}
			seed := masterSeed(c)
			ctx, stop := signalContext(c.Context)
			defer stop()
			total := int64(c.Int("prompts")) * int64(c.Int("tokens"))
			bar := newHeaded(c.App.ErrWriter, fmt.Sprintf("simulate: generate %s with %s, seed %d", c.String("drafter"), c.String("algo"), seed), total, "tokens")
			spec := seq.Spec{Target: c.String("target"), Draft: c.String("draft"), CacheDir: c.String("cache"),
				NumPrompts: c.Int("prompts"), PromptLen: c.Int("prompt-len"),
				Config: seq.Config{Tokens: c.Int("tokens"), Drafter: c.String("drafter"), Algo: c.String("algo"), Params: ps,
					Gamma: c.Int("gamma"), K: k, MaxNgram: c.Int("max-ngram"), Policy: pol,
					Cost: c.Float64("cost"), VerifyCost: c.Float64("verify-cost"), Seed: seed, Workers: c.Int("workers"),
					Level: c.Float64("level"), Power: c.Float64("power"), Progress: bar.update}}
			rep, err := seq.Run(ctx, spec)
			bar.done(err != nil)
			switch {
			case err != nil && ctx.Err() != nil && !rep.Interrupted:
				return diag.Interrupted(fmt.Errorf("interrupted before the first token (loading or training the models); nothing was generated"))
			case err != nil && fsutil.IsIO(err): // the model cache
				return diag.IO(err)
			case err != nil:
				return diag.Usage(err)
			}
			if err := printResult(c, rep, func(w io.Writer) { printGenerate(w, rep) }); err != nil {
				return err
			}
			switch {
			case rep.Interrupted:
				return diag.Interrupted(fmt.Errorf("interrupted after %d of %d tokens; the report above covers them", rep.Emitted, total))
			case rep.Verdict.Verdict == check.Violated:
				return diag.Violated(fmt.Errorf("%s violates the target law at sequence level (p = %.3g)", rep.Algo, rep.Verdict.PValue))
			}
			return nil
		},
	}
}

// generateApplies refuses the flags that do not apply to the drafter
// --drafter names: --k to all but the tree drafters (tree and the drawn
// tree drafters of the registry), --max-ngram to all but lookup.
func generateApplies(c *cli.Context) error {
	d := c.String("drafter")
	if d != seq.Tree && !slices.Contains(draft.TreeNames(), d) {
		if err := refuseFlags(c, fmt.Sprintf("drafter %s drafts chains; --k sizes the trees of %s, %s", d, seq.Tree, strings.Join(draft.TreeNames(), ", ")), "k"); err != nil {
			return err
		}
	}
	if d != draft.LookupName {
		return refuseFlags(c, fmt.Sprintf("drafter %s matches no n-grams; --max-ngram configures %s", d, draft.LookupName), "max-ngram")
	}
	return nil
}

// printGenerate prints a generation's report r as text.
func printGenerate(w io.Writer, r seq.Report) {
	pv := r.Provenance
	fmt.Fprintf(w, "target %s, draft %s: %s corpus, %d files, %d bytes (sha256 %.12s), %s tokenizer V = %d, cached %v\n",
		r.Target, r.Draft, pv.Corpus.Kind, pv.Corpus.Files, pv.Corpus.Bytes, pv.Corpus.SHA256, pv.Tokenizer, pv.V, pv.Cached)
	fmt.Fprintf(w, "%s drafter, %s, gamma %d, policy %s: %d prompts x %d tokens, seed %d\n", r.Drafter, r.Algo, r.Gamma, r.Policy, r.Prompts, r.Tokens, r.Seed)
	f := func(v float64) string { return table.Fixed(v, true, 4) }
	fmt.Fprintf(w, "tokens per target call %s [%s, %s]; acceptance %s (accepted / drafted); mean accepted length %s; mean beta %s\n",
		f(r.TokensPerCall), f(r.TokensPerCallCI[0]), f(r.TokensPerCallCI[1]), f(r.Acceptance), f(r.MeanAcceptedLength), f(r.MeanBeta))
	fmt.Fprintf(w, "speedup %s [%s, %s] (c = %g, v = %g)\n", f(r.Speedup), f(r.SpeedupCI[0]), f(r.SpeedupCI[1]), r.Cost, r.Verify)
	v := r.Verdict
	fmt.Fprintf(w, "%s\n", v.Claim)
	fmt.Fprintf(w, "verdict: %s (Holm-adjusted p = %.4g at level %g over %d emitted tokens; invalid outcomes %d)\n",
		v.Verdict, v.PValue, v.Level, v.Positions, v.Invalid)
	fmt.Fprintf(w, "each test detects, with power %g at its Holm share of the level, a deviation of at least min TV in the quantity named:\n", v.Power)
	for _, t := range v.Tests {
		fmt.Fprintf(w, "  %-9s X2 = %10.2f  df = %5d  p = %.4g  p_holm = %.4g  min TV %.4g at level %.3g\n      (%s)\n",
			t.Name, t.Stat, t.DF, t.PValue, t.PHolm, t.MinDetTV, t.LevelShare, t.Quantity)
	}
	fmt.Fprintf(w, "%.0f tokens/s on %d workers (%.2f s)\n", r.TokensPerSecond, r.Workers, r.Seconds)
}
