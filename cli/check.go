package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/table"
)

func init() { register(checkCommand) }

// checkJSON is the JSON form of 'simulate check'.
type checkJSON struct {
	resolve.Report
	Elapsed float64 `json:"elapsed_seconds"`
	// Next are the next steps, each a command this mode accepts.
	Next []nextStep `json:"next"`
}

// newCheckJSON is the output of a check's report: with no finished trial
// (an interrupt before the first) its means are n/a (NaN: null in JSON,
// n/a in text), not 0.
func newCheckJSON(rep resolve.Report, elapsed float64, inv invocation) checkJSON {
	if rep.Trials == 0 {
		nan := math.NaN()
		rep.AlphaHat, rep.MeanAccepted, rep.MeanEmitted, rep.EmittedCI = nan, nan, nan, [2]float64{nan, nan}
	}
	inv.cost.finish(rep.Trials, elapsed)
	next := nextSteps(rep, inv)
	if next == nil {
		next = []nextStep{}
	}
	return checkJSON{Report: rep, Elapsed: elapsed, Next: next}
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "statistical check of a chain or tree rule: emitted tokens against the target law (or, with --conform, outcomes against a rule's law), with stated power",
		Flags: append(checkFlags(),
			append([]cli.Flag{
				&cli.Int64Flag{Name: "trials", Value: 200000, Usage: "speculative steps"},
				&cli.Float64Flag{Name: "seconds", Usage: "time budget instead of --trials: run as many trials as fill it"},
				&cli.StringFlag{Name: "report", Usage: "also write a report page into this directory: check.md (the claim, where the law departs, the tests) and check-profile.{png,svg,pdf} (observed vs expected per position)"},
			}, append(externalFlags(), shardFlags()...)...)...),
		Action: func(c *cli.Context) error {
			if err := checkLimits(c); err != nil {
				return err
			}
			if dir := c.String("report"); dir != "" {
				// before any work: a report that cannot be written is a
				// usage error now, not an I/O error that replaces the
				// verdict's exit code after the check
				if err := resolve.CheckReportDir(dir); err != nil {
					return err
				}
			}
			if err := checkApplies(c); err != nil {
				return err
			}
			switch {
			case c.Bool("merge"):
				return checkMerge(c)
			case c.IsSet("shard") || c.IsSet("state-out"):
				return checkShard(c)
			case c.IsSet("external"):
				return checkExternal(c)
			case c.NArg() > 0:
				return diag.Usage(fmt.Errorf("check takes no arguments (%q); state files go with --merge", c.Args().First()))
			}
			req, err := checkRequest(c)
			if err != nil {
				return err
			}
			req.Profile = c.String("report") != ""
			seed := req.Seed
			ctx, stop := signalContext(c.Context)
			defer stop()
			bar := newHeaded(c.App.ErrWriter, fmt.Sprintf("simulate: check %s, seed %d", req.Algo, seed), req.Trials, "trials")
			start := time.Now()
			cost := &costModel{start: start}
			req.Progress = func(done, total int64) { cost.progress(done); bar.update(done, total) }
			rep, err := resolve.Run(ctx, req)
			bar.done(errors.Is(err, diag.ErrUsage))
			if err != nil && (ctx.Err() == nil || errors.Is(err, diag.ErrUsage)) {
				return err
			}
			if ctx.Err() != nil && rep.Verdict == "" {
				return diag.Interrupted(fmt.Errorf("interrupted before any trial ran (while building the source); nothing to report"))
			}
			out := newCheckJSON(rep, time.Since(start).Seconds(), newInvocation(c, algos.IsTree(req.Algo), rep.Draft, *cost))
			return printCheckResult(c, out, rep, req.Trials, ctx.Err() != nil)
		},
	}
}

// checkApplies refuses the flags that do not apply to the check c
// describes: an external implementation's flags without --external (they
// would be ignored), and with --external the in-process rule's (--algo,
// and the sampler-vs-law test's, which an external check does not run:
// it tests conformance with --conform). --workers is not refused there:
// the slurm array of a sharded check passes it to every shard.
func checkApplies(c *cli.Context) error {
	if !c.IsSet("external") {
		return refuseFlags(c, "it configures an external implementation's check (--external)", flagNames(externalFlags())...)
	}
	return refuseFlags(c, "it configures an in-process rule's check, not --external's", "algo", "law-every", "skip-law-test", "law-test")
}

// printCheckResult prints a check's report out (text or JSON), writes
// its report page where --report asks, and returns the verdict's exit
// (checkExit): the one ending of a one-process check and of a merge.
func printCheckResult(c *cli.Context, out checkJSON, rep resolve.Report, trials int64, interrupted bool) error {
	if werr := printResult(c, out, func(w io.Writer) { printCheck(w, out) }); werr != nil {
		return werr
	}
	if dir := c.String("report"); dir != "" {
		files, err := resolve.WriteReport(dir, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "simulate: report written: %s\n", strings.Join(files, ", "))
	}
	return checkExit(interrupted, rep.Algorithm, rep, trials)
}

// checkRequest reads the check a command's flags describe (check and
// plan share them).
func checkRequest(c *cli.Context) (resolve.Request, error) {
	ps, err := parseParams(c.StringSlice("param"))
	if err != nil {
		return resolve.Request{}, diag.Usage(err)
	}
	k, err := givenK(c)
	if err != nil {
		return resolve.Request{}, err
	}
	seed := masterSeed(c)
	req := resolve.Request{Algo: c.String("algo"), Params: ps, Source: c.String("source"), MemBudget: memBudget(c), K: k, Draft: c.String("draft"), Delay: c.Int("delay"),
		Conform: c.String("conform"), SkipLaw: c.Bool("skip-law-test"), LawTest: c.Bool("law-test"), Config: check.Config{Gamma: c.Int("gamma"), Trials: c.Int64("trials"), Seconds: c.Float64("seconds"),
			Seed: seed, Level: c.Float64("level"), Power: c.Float64("power"), Workers: c.Int("workers"), LawEvery: c.Int64("law-every")}}
	if c.IsSet("p") || c.IsSet("q") {
		pr, err := pairFromFlags(c, seed)
		if err != nil {
			return req, err
		}
		req.Pair = &pr
	}
	if c.IsSet("branch") {
		if req.Branch, err = parseBranch(c.String("branch")); err != nil {
			return req, diag.Usage(err)
		}
	}
	return req, nil
}

// checkFlags are the flags that describe a check (check, plan).
func checkFlags() []cli.Flag {
	return append([]cli.Flag{
		algoFlag("token"), paramFlag(),
		&cli.StringFlag{Name: "source", Value: "dirichlet:V=32000,a=0.1,beta=0.7", Usage: "source spec kind:key=value,...; kinds: " + strings.Join(source.Kinds(), ", ") + " ('simulate list sources' prints their keys)"},
		&cli.StringFlag{Name: "p", Usage: "a context-free target instead of --source (with --q)"},
		&cli.StringFlag{Name: "q", Usage: "a context-free draft instead of --source (with --p)"},
		gammaFlag("draft length γ (tree depth)"),
		&cli.StringFlag{Name: "conform", Usage: "test the steps against rule R's exact law given the drafts (\"implements rule R\") instead of losslessness: R, with --param's parameters when R is --algo's rule (or with --external), or R:k=v,... with its own"},
		&cli.BoolFlag{Name: "skip-law-test", Usage: "leave out the sampler-vs-law test (the check then covers the target law only)"},
		&cli.Int64Flag{Name: "law-every", Usage: "run the sampler-vs-law test on every K-th trial (0: chosen from gamma and V so that it costs about what the other tests cost, ceil((gamma+1)*V/2048) for in-process rules' losslessness checks, 1 otherwise)"},
		&cli.BoolFlag{Name: "law-test", Usage: fmt.Sprintf("run the sampler-vs-law test on pools of any V (by default it is left out above V = %d, where it dominates the cost)", resolve.LawTestAutoMaxV)},
		&cli.Float64Flag{Name: "level", Value: check.DefaultLevel, Usage: "family-wise significance level"},
		&cli.Float64Flag{Name: "power", Value: check.DefaultPower, Usage: "power at which each test's min_detectable_tv is reported"},
		workersFlag(0), seedFlag(), jsonFlag(),
	}, treeFlags()...)
}

// checkExit is the error, and so the exit code, of a check of name whose
// report rep is printed: interrupted (a signal came before the trials
// asked for ran), violated, a contract breach, inconclusive, or nil when
// preserved.
func checkExit(interrupted bool, name string, rep resolve.Report, trials int64) error {
	switch {
	case interrupted:
		return diag.Interrupted(fmt.Errorf("interrupted after %d of %d trials; the report above covers the finished trials", rep.Trials, trials))
	case rep.Verdict == check.Violated:
		return diag.Violated(fmt.Errorf("%s: verdict violated (Holm-adjusted p = %.3g, edge cases %s, invalid outcomes %d)", escape.Line(name), rep.PValue, rep.Edge, rep.Invalid))
	case rep.Verdict == check.ContractBreach:
		return diag.Contract(fmt.Errorf("%s: verdict contract_breach: no test of the law rejected, but the answers broke their contract (see the contract component)", escape.Line(name)))
	case rep.Verdict == check.Inconclusive:
		return diag.Inconclusive(fmt.Errorf("%s: verdict inconclusive: a test had no power (see min_detectable_tv); run more trials", escape.Line(name)))
	}
	return nil
}

// printCheck writes a check's report as text. Every string in it that can
// come from input (an external implementation's name, in the algorithm,
// claim, edge-case messages and notes) goes through escape.Line, so no
// character of it starts a line or acts on the terminal: a name holding
// "\nverdict: not_detected" prints as one escaped word, not a verdict.
func printCheck(w io.Writer, o checkJSON) {
	l := escape.Line
	fmt.Fprintf(w, "%s on %s, gamma %d, %d trials, seed %d, mode %s (%.1f s)\n", l(o.Algorithm), l(o.Source), o.Gamma, o.Trials, o.Seed, l(o.Mode), o.Elapsed)
	fmt.Fprintf(w, "%s\n", l(o.Claim))
	fmt.Fprintf(w, "verdict: %s (Holm-adjusted p = %.4g at level %g; edge cases: %s %s; invalid outcomes %d)\n", o.Verdict, o.PValue, o.Level, o.Edge, l(o.EdgeMsg), o.Invalid)
	if o.Mode != "lossless" {
		fmt.Fprintf(w, "edge cases of losslessness, reported beside the conformance verdict: %s %s; against the named rule: %s %s\n", o.Edge, l(o.EdgeMsg), o.EdgeConform, l(o.EdgeConformMsg))
	}
	printResembles(w, o.Report)
	for _, k := range o.RowKinds {
		tests := fmt.Sprintf("smallest Holm-adjusted p = %.4g, finest min TV %.4g over its %d tests", k.PHolm, k.MinDetTV, len(k.Tests))
		if len(k.Tests) == 0 {
			tests = "no test: " + k.Note
		}
		fmt.Fprintf(w, "row kind %q: %s (%s; %d trials, %d invalid outcomes, mean emitted %.3f)\n", k.Kind, k.Verdict, tests, k.Trials, k.Invalid, k.MeanEmitted)
	}
	for _, n := range o.Next {
		fmt.Fprintf(w, "next: %s\n      (%s)\n", l(n.Command), l(n.Why))
	}
	f := func(v float64) string { return table.Fixed(v, true, 4) }
	fmt.Fprintf(w, "alpha_hat %s, mean accepted %s, mean emitted %s [%s, %s]\n", f(o.AlphaHat), f(o.MeanAccepted), f(o.MeanEmitted), f(o.EmittedCI[0]), f(o.EmittedCI[1]))
	if !math.IsNaN(o.CPUSeconds) {
		fmt.Fprintf(w, "cost: %.3g CPU-s for the trials (%.3g trials per CPU-s); with one CPU-s the finest test would detect TV %s\n",
			o.CPUSeconds, float64(o.Trials)/o.CPUSeconds, table.Fixed(o.TVAtOneCPUSecond, true, 4))
	}
	for _, n := range o.Notes {
		fmt.Fprintf(w, "note: %s\n", l(n))
	}
	fmt.Fprintf(w, "each test detects, with power %g at its Holm share of the level, a deviation of at least min TV in the quantity named:\n", o.Power)
	for _, t := range o.Tests {
		fmt.Fprintf(w, "  %-36s X2 = %10.2f  df = %5d  p = %.4g  p_holm = %.4g  min TV %.4g at level %.3g\n      (%s)\n",
			l(t.Name), t.Stat, t.DF, t.PValue, t.PHolm, t.MinDetTV, t.LevelShare, l(t.Quantity))
	}
}

// printResembles writes, for a violated check, the known bug the
// outcomes resemble (or that none fits), and for every check with fits
// the rule they look like most, or that no named rule explains them
// better than chance.
func printResembles(w io.Writer, r resolve.Report) {
	l := escape.Line
	if r.Verdict == check.Violated {
		switch {
		case r.Resembles == nil:
			fmt.Fprintln(w, "resembles: not ranked (the bug catalogue is scored on chain rules' outcomes given their drafts; this check has none)")
		case len(r.Resembles) == 0:
			fmt.Fprintln(w, "resembles: no known bug fits (no catalogued bug's law beats the best lossless rule's log-likelihood by more than chance, and no edge case shows one)")
		default:
			printResemblance(w, r.Resembles)
		}
	}
	if len(r.Fits) == 0 {
		return
	}
	ex, nominal, ok := check.Explaining(r.Fits, r.Level)
	switch {
	case len(ex) > 0:
		fmt.Fprintf(w, "fits: most like %s (%s), log-likelihood %.4g above the best lossless rule %s over %d steps\n", l(ex[0].Name), l(ex[0].Summary), ex[0].Gap, l(nominal.Name), ex[0].Steps)
	case ok && r.Verdict == check.Violated:
		fmt.Fprintf(w, "fits: no named rule explains the outcomes (none beats the best lossless rule %s by more than chance over %d steps)\n", l(nominal.Name), nominal.Steps)
	case ok:
		fmt.Fprintf(w, "fits: most like the lossless rule %s (mean log-likelihood %.4g over %d steps); no lossy rule or planted bug beats it by more than chance\n", l(nominal.Name), nominal.MeanLogLik, nominal.Steps)
	}
}

// printResemblance writes the first of a violated check's resemblances:
// a bug shown by a rows-of-a-batch test with that test and no gap, else
// the bug with its log-likelihood gap to the next.
func printResemblance(w io.Writer, rs []check.Resemblance) {
	l, b := escape.Line, rs[0]
	if b.LogLikGap == nil {
		fmt.Fprintf(w, "resembles: %s (%s), shown by the rows-of-a-batch test %s; no log-likelihood gap is claimed: each row's law given its drafts is the rule's\n", l(b.Bug), l(b.Thread), l(b.Test))
		return
	}
	next := "the best lossless rule"
	if len(rs) > 1 {
		next = rs[1].Bug
	}
	fmt.Fprintf(w, "resembles: %s (%s), log-likelihood %.4g above the next (%s)\n", l(b.Bug), l(b.Thread), *b.LogLikGap, l(next))
}

// levelLimits refuses a --level or --power outside (0, 1).
func levelLimits(c *cli.Context) error {
	for _, name := range []string{"level", "power"} {
		if v := c.Float64(name); c.IsSet(name) && !(v > 0 && v < 1) {
			return diag.Usage(fmt.Errorf("--%s = %g; use a value in (0, 1)", name, v))
		}
	}
	return nil
}

// checkLimits refuses impossible values of the flags whose library
// defaults would otherwise stand in for an explicit 0: a level or power
// outside (0, 1), and a trial count outside [1, sim.MaxTrials].
func checkLimits(c *cli.Context) error {
	if err := levelLimits(c); err != nil {
		return err
	}
	if c.Float64("seconds") > 0 && !c.IsSet("trials") {
		return nil
	}
	if err := sim.CheckTrials("--trials", c.Int64("trials")); err != nil {
		return diag.Usage(err)
	}
	return nil
}
