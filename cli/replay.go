package cli

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
)

func init() { register(replayCommand) }

// replayRuleJSON is one rule in the JSON form of 'simulate replay'.
type replayRuleJSON struct {
	Algorithm           string              `json:"algorithm"`
	Mutant              bool                `json:"mutant"`
	Lossy               bool                `json:"lossy"`
	Greedy              bool                `json:"greedy"`
	Steps               int64               `json:"steps"`
	HasLaw              bool                `json:"has_law"`
	MeanAcceptedExact   *float64            `json:"mean_accepted_exact"`
	MeanEmittedExact    *float64            `json:"mean_emitted_exact"`
	EmittedExactCI95    []*float64          `json:"emitted_exact_ci95"`
	MeanAlpha           float64             `json:"mean_alpha"`
	MeanAcceptedSampled *float64            `json:"mean_accepted_sampled"`
	AcceptedCI95        []*float64          `json:"accepted_ci95"`
	MeanEmittedSampled  *float64            `json:"mean_emitted_sampled"`
	CI95                []*float64          `json:"ci95"`
	ExactVsSampledZ     *float64            `json:"exact_vs_sampled_z"`
	Lossless            *data.LosslessCheck `json:"lossless"`
}

// replayJSON is the JSON form of 'simulate replay'. Field names are stable.
type replayJSON struct {
	Log         string               `json:"log"`
	Bug         string               `json:"bug"`
	Seed        uint64               `json:"seed"`
	Reps        int                  `json:"reps"`
	Steps       int64                `json:"steps"`
	V           int                  `json:"V"`
	MaxGamma    int                  `json:"max_gamma"`
	Provenance  map[string]string    `json:"provenance"`
	MeanAlpha   *float64             `json:"mean_alpha"`
	Positions   []data.PositionStats `json:"positions"`
	Logged      loggedJSON           `json:"logged"`
	Rules       []replayRuleJSON     `json:"rules"`
	Warnings    []string             `json:"warnings"`
	ElapsedS    float64              `json:"elapsed_s"`
	StepsPerSec float64              `json:"steps_per_s"`
	MBPerSec    float64              `json:"mb_per_s"`
}

type loggedJSON struct {
	Steps       int64               `json:"steps"`
	MeanEmitted *float64            `json:"mean_emitted"`
	CI95        []*float64          `json:"ci95"`
	Lossless    *data.LosslessCheck `json:"lossless"`
}

// num maps NaN and ±Inf to null.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func ci(c [2]float64) []*float64 { return []*float64{num(c[0]), num(c[1])} }

// logErr maps a data error to an exit code: invalid content is a usage
// error (2), anything else reading the file an I/O error (5).
func logErr(err error) error {
	if errors.Is(err, data.ErrInvalid) {
		return cliutil.Usage(err)
	}
	return cliutil.IO(err)
}

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "replay acceptance rules over a logged run: exact expectations given each logged draft, sampled outcomes, divergences and a losslessness check",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log", Usage: "the log (parquet, schema of package data)", Required: true},
			&cli.StringFlag{Name: "algo", Value: "token", Usage: "comma-separated rules (see 'simulate list'), default parameters"},
			&cli.IntFlag{Name: "reps", Value: 1, Usage: "sampled outcomes per step and rule"},
			&cli.Int64Flag{Name: "max-steps", Usage: "stop after this many steps (0: all)"},
			&cli.StringFlag{Name: "bug", Value: "none", Usage: "plant a p/q processing bug (logit logs): none, p-raw, q-raw, q-bf16"},
			&cli.Float64Flag{Name: "level", Value: 0.001, Usage: "significance level of the losslessness verdict"},
			&cli.BoolFlag{Name: "no-divergences", Usage: "skip the per-position KL and TV (α is always computed)"},
			&cli.StringFlag{Name: "steps-out", Usage: "write every step's exact and sampled values to this CSV file"},
			&cli.BoolFlag{Name: "decode-only", Usage: "only decode the rows with parquet-go (the I/O floor) and report steps/s and MB/s"},
			&cli.BoolFlag{Name: "fail-on-violation", Usage: "exit 3 when a rule that is neither a mutant nor lossy fails the losslessness check"},
			seedFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			bug, err := data.ParseBug(c.String("bug"))
			if err != nil {
				return cliutil.Usage(err)
			}
			if c.Int("reps") < 1 {
				return cliutil.Usage(fmt.Errorf("--reps = %d; use at least 1", c.Int("reps")))
			}
			if l := c.Float64("level"); !(l > 0 && l < 1) {
				return cliutil.Usage(fmt.Errorf("--level = %g; use a value in (0, 1)", l))
			}
			var rules []data.ReplayRule
			var entries []algos.Entry
			for _, name := range strings.Split(c.String("algo"), ",") {
				name = strings.TrimSpace(name)
				e, err := algos.Lookup(name)
				if err != nil {
					return cliutil.Usage(err)
				}
				a, err := e.Build(nil)
				if err != nil {
					return cliutil.Usage(err)
				}
				rules = append(rules, data.ReplayRule{Name: name, Algo: a, Greedy: e.Greedy})
				entries = append(entries, e)
			}
			if c.Bool("decode-only") {
				return decodeOnly(c)
			}
			seed := masterSeed(c)
			r, err := data.Open(c.String("log"), data.ReadOptions{Bug: bug})
			if err != nil {
				return logErr(err)
			}
			defer r.Close()
			cfg := data.ReplayConfig{Seed: seed, Reps: c.Int("reps"), MaxSteps: c.Int64("max-steps"),
				Level: c.Float64("level"), SkipDivergences: c.Bool("no-divergences")}
			if path := c.String("steps-out"); path != "" {
				f, err := os.Create(path)
				if err != nil {
					return cliutil.IO(err)
				}
				defer f.Close()
				cw := csv.NewWriter(f)
				defer cw.Flush()
				cw.Write([]string{"row", "prompt_id", "step", "algorithm", "accepted_exact", "emitted_exact", "accepted_sampled", "emitted_sampled"})
				ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
				cfg.PerStep = func(s data.StepResult) error {
					return cw.Write([]string{strconv.FormatInt(s.Row, 10), strconv.FormatInt(s.PromptID, 10), strconv.FormatInt(s.Step, 10),
						s.Rule, ff(s.AcceptedExact), ff(s.EmittedExact), ff(s.AcceptedSampled), ff(s.EmittedSampled)})
				}
			}
			ctx, cancel := signalContext(c.Context)
			defer cancel()
			start := time.Now()
			rep, err := data.Replay(ctx, r, rules, cfg)
			if err != nil {
				if ctx.Err() != nil {
					return cliutil.Interrupted(err)
				}
				if errors.Is(err, data.ErrInvalid) || errors.Is(err, data.ErrCorrupt) {
					return logErr(err)
				}
				return err
			}
			el := time.Since(start).Seconds()
			m := r.Meta()
			out := replayJSON{Log: c.String("log"), Bug: c.String("bug"), Seed: seed, Reps: cfg.Reps, Steps: rep.Steps, V: rep.V,
				MaxGamma: rep.MaxGamma, Provenance: provMap(m.Provenance), MeanAlpha: num(rep.MeanAlpha), Positions: rep.Positions,
				Warnings: rep.Warnings, ElapsedS: el}
			for i := range out.Positions {
				p := &out.Positions[i]
				if math.IsNaN(p.MeanKL) {
					p.MeanKL = 0
				}
				if math.IsNaN(p.MeanTV) {
					p.MeanTV = 0
				}
			}
			if out.Warnings == nil {
				out.Warnings = []string{}
			}
			if el > 0 {
				out.StepsPerSec = float64(rep.Steps) / el
				if m.Rows > 0 {
					out.MBPerSec = float64(m.Size) * float64(rep.Steps) / float64(m.Rows) / el / 1e6
				}
			}
			lg := rep.LoggedLossless
			out.Logged = loggedJSON{Steps: rep.LoggedSteps, MeanEmitted: num(rep.LoggedMeanEmitted), CI95: ci(rep.LoggedCI95), Lossless: &lg}
			var violated []string
			for i, rr := range rep.Rules {
				e := entries[i]
				lc := rr.Lossless
				out.Rules = append(out.Rules, replayRuleJSON{Algorithm: rr.Name, Mutant: e.Mutant, Lossy: e.Lossy, Greedy: e.Greedy,
					Steps: rr.Steps, HasLaw: rr.HasLaw, MeanAcceptedExact: num(rr.MeanAcceptedExact), MeanEmittedExact: num(rr.MeanEmittedExact),
					EmittedExactCI95: ci(rr.EmittedExactCI95), MeanAlpha: rep.MeanAlpha, MeanAcceptedSampled: num(rr.MeanAcceptedSampled),
					AcceptedCI95: ci(rr.AcceptedCI95), MeanEmittedSampled: num(rr.MeanEmittedSampled), CI95: ci(rr.EmittedCI95),
					ExactVsSampledZ: num(rr.ExactMinusSampledZ), Lossless: &lc})
				if lc.Verdict == "violated" && !e.Mutant && !e.Lossy {
					violated = append(violated, rr.Name)
				}
			}
			if c.Bool("json") {
				if err := cliutil.WriteJSON(c.App.Writer, out); err != nil {
					return cliutil.IO(err)
				}
			} else {
				printReplay(c, out)
			}
			if len(violated) > 0 && c.Bool("fail-on-violation") {
				return cliutil.Violated(fmt.Errorf("losslessness check failed for %s", strings.Join(violated, ", ")))
			}
			return nil
		},
	}
}

func provMap(pv data.Provenance) map[string]string {
	m := map[string]string{"writer": pv.Writer, "revision": pv.Revision, "go_version": pv.GoVersion,
		"seed": strconv.FormatUint(pv.Seed, 10), "source": pv.Source, "created": pv.Created}
	for k, v := range pv.Extra {
		m[k] = v
	}
	return m
}

func f(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', 4, 64)
}

func printReplay(c *cli.Context, out replayJSON) {
	w := c.App.Writer
	fmt.Fprintf(w, "log %s: %d steps, V = %d, gamma <= %d, seed %d, bug %s (%.1f steps/s, %.1f MB/s)\n",
		out.Log, out.Steps, out.V, out.MaxGamma, out.Seed, out.Bug, out.StepsPerSec, out.MBPerSec)
	for _, p := range out.Positions {
		fmt.Fprintf(w, "  position %d: alpha %.4f  TV %.4f  KL %.4f (%d steps with KL = inf)\n", p.Position, p.MeanAlpha, p.MeanTV, p.MeanKL, p.KLInfinite)
	}
	fmt.Fprintf(w, "logged run: %d steps, mean emitted %s [%s, %s], lossless %s (p = %.3g)\n", out.Logged.Steps, f(out.Logged.MeanEmitted),
		f(out.Logged.CI95[0]), f(out.Logged.CI95[1]), out.Logged.Lossless.Verdict, out.Logged.Lossless.PValue)
	for _, r := range out.Rules {
		fmt.Fprintf(w, "%-24s exact: accepted %s emitted %s | sampled: accepted %s emitted %s [%s, %s] | lossless %s (p = %.3g)\n",
			r.Algorithm, f(r.MeanAcceptedExact), f(r.MeanEmittedExact), f(r.MeanAcceptedSampled), f(r.MeanEmittedSampled),
			f(r.CI95[0]), f(r.CI95[1]), r.Lossless.Verdict, r.Lossless.PValue)
	}
	for _, s := range out.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "simulate: warning: %s\n", s)
	}
}

// decodeOnlyJSON is the JSON form of 'simulate replay --decode-only'.
type decodeOnlyJSON struct {
	Log         string  `json:"log"`
	Steps       int64   `json:"steps"`
	Bytes       int64   `json:"bytes"`
	ElapsedS    float64 `json:"elapsed_s"`
	StepsPerSec float64 `json:"steps_per_s"`
	MBPerSec    float64 `json:"mb_per_s"`
}

func decodeOnly(c *cli.Context) error {
	f, err := os.Open(c.String("log"))
	if err != nil {
		return cliutil.IO(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return cliutil.IO(err)
	}
	start := time.Now()
	n, err := data.DecodeOnly(f, st.Size())
	if err != nil {
		return logErr(err)
	}
	el := time.Since(start).Seconds()
	out := decodeOnlyJSON{Log: c.String("log"), Steps: n, Bytes: st.Size(), ElapsedS: el,
		StepsPerSec: float64(n) / el, MBPerSec: float64(st.Size()) / el / 1e6}
	if c.Bool("json") {
		return cliutil.WriteJSON(c.App.Writer, out)
	}
	fmt.Fprintf(c.App.Writer, "decoded %d steps of %s in %.2f s: %.1f steps/s, %.1f MB/s\n", n, out.Log, el, out.StepsPerSec, out.MBPerSec)
	return nil
}
