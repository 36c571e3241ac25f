package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/experiments/sweep"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// nextStep is one thing a check's reader can run next: a command line the
// CLI accepts in the check's mode, and why.
type nextStep struct {
	Command string `json:"command"`
	Why     string `json:"why"`
}

// invocation is what a check ran with, for writing its next steps as
// commands: the flags given (without those a step replaces), whether the
// rule verifies trees and with which draft kind, and the run's cost.
type invocation struct {
	args  []string
	tree  bool
	draft string
	cost  costModel
}

// nextReplaced are the flags a next step sets itself or that do not
// belong in a suggested command.
var nextReplaced = []string{"trials", "seconds", "json", "report", "conform", "param"}

// newInvocation reads c's command line: the app's flags and the command's
// that were set, quoted for a POSIX shell.
func newInvocation(c *cli.Context, tree bool, draft string, cost costModel) invocation {
	inv := invocation{args: []string{"simulate"}, tree: tree, draft: draft, cost: cost}
	if p := c.Lineage(); len(p) > 1 && p[1].App != nil {
		inv.args = append(inv.args, setFlags(p[1], p[1].App.Flags)...)
	}
	inv.args = append(inv.args, c.Command.Name)
	inv.args = append(inv.args, setFlags(c, c.Command.Flags)...)
	return inv
}

// setFlags renders the flags of fs that c has set, as --name value.
func setFlags(c *cli.Context, fs []cli.Flag) []string {
	var out []string
	for _, f := range fs {
		name := f.Names()[0]
		if !c.IsSet(name) || slices.Contains(nextReplaced, name) {
			continue
		}
		switch v := c.Value(name).(type) {
		case bool:
			out = append(out, fmt.Sprintf("--%s=%t", name, v))
		case cli.StringSlice:
			for _, s := range v.Value() {
				out = append(out, "--"+name, quoteArg(s))
			}
		default:
			out = append(out, "--"+name, quoteArg(fmt.Sprint(c.Value(name))))
		}
	}
	return out
}

// quoteArg quotes s for a shell where it holds anything but plain
// characters.
func quoteArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:=/+%@") == "" {
		return s
	}
	return sweep.ShellQuote(s)
}

// command is the invocation with extra flags appended.
func (inv invocation) command(extra ...string) string {
	return strings.Join(append(slices.Clone(inv.args), extra...), " ")
}

// costModel is a check's time as a fixed cost plus a cost per trial,
// from two points of its own run: the first progress report (trials done
// at a time) and the end. With one point it is linear in the trials.
type costModel struct {
	start             time.Time
	firstAt           time.Time
	firstDone         int64
	fixed, perTrial   float64
	fromTwoPoints, ok bool
}

// progress records the first report of finished trials.
func (m *costModel) progress(done int64) {
	if m.firstAt.IsZero() && done > 0 {
		m.firstAt, m.firstDone = time.Now(), done
	}
}

// finish fits the model to a run of trials that took elapsed seconds.
func (m *costModel) finish(trials int64, elapsed float64) {
	if trials <= 0 || elapsed <= 0 {
		return
	}
	m.ok = true
	if !m.firstAt.IsZero() && trials > m.firstDone {
		first := m.firstAt.Sub(m.start).Seconds()
		m.perTrial = (elapsed - first) / float64(trials-m.firstDone)
		m.fixed = max(elapsed-m.perTrial*float64(trials), 0)
		m.fromTwoPoints = m.perTrial > 0
	}
	if !m.fromTwoPoints {
		m.fixed, m.perTrial = 0, elapsed/float64(trials)
	}
}

// estimate says how long n trials would take.
func (m costModel) estimate(n int64) string {
	if !m.ok {
		return ""
	}
	s := m.fixed + m.perTrial*float64(n)
	if m.fromTwoPoints {
		return fmt.Sprintf("about %.0f s on this machine (%.2g s fixed + %.3g µs a trial, from two points of this run)", s, m.fixed, m.perTrial*1e6)
	}
	return fmt.Sprintf("about %.0f s on this machine (this run's time per trial)", s)
}

// nextSteps says what would show more than this check did, each as a
// command the CLI accepts in this mode: for a check that detected
// nothing, the trials that halve every detectable TV, and the
// conformance test to the lossless rule of this mode whose law explains
// the outcomes best (or, without fits and for a rule that is not itself
// one of the harness's lossless rules, the one this mode's rules are
// measured against); for a violation, the conformance test to the rule or
// planted bug the outcomes look most like, which tests that hypothesis.
func nextSteps(r resolve.Report, inv invocation) []nextStep {
	var out []nextStep
	switch r.Verdict {
	case check.NotDetected, check.Inconclusive:
		if r.MoreTrials > 0 && r.Trials > 0 {
			why := fmt.Sprintf("would detect about half the TV (%.3g in the finest test)", r.MinDetectableTV/2)
			if e := inv.cost.estimate(r.MoreTrials); e != "" {
				why += ", " + e
			}
			out = append(out, nextStep{inv.command("--trials", fmt.Sprint(r.MoreTrials)), why})
		}
		if r.Mode != "lossless" {
			break
		}
		if name, why := conformCandidate(r, inv, true); name != "" {
			out = append(out, nextStep{inv.command("--trials", fmt.Sprint(r.Trials), "--conform", name), why})
		}
	case check.Violated:
		if name, why := conformCandidate(r, inv, false); name != "" {
			out = append(out, nextStep{inv.command("--trials", fmt.Sprint(r.Trials), "--conform", name), why})
		}
	}
	return out
}

// conformCandidate names the rule of this mode to hold the outcomes
// against: the best fit (lossless only, with lossless), else for a check
// that detected nothing the lossless rule this mode's rules implement
// (token verification for chains; for trees, a lossless tree rule of the
// same draft kind), never the rule under test itself. After a violation
// (lossless false) it is the lossy rule or planted bug that explains the
// outcomes better than chance (check.Explaining), else the lossless rule
// that explains them best.
func conformCandidate(r resolve.Report, inv invocation, lossless bool) (string, string) {
	if !lossless {
		return violationCandidate(r, inv)
	}
	if registeredLossless(r.Algorithm, inv.tree) {
		return "", ""
	}
	for _, f := range r.Fits {
		if f.Lossless && f.Name != r.Algorithm && modeRule(f.Name, inv.tree) {
			return f.Name, fmt.Sprintf("tests the outcomes given the drafts against the lossless rule %s's exact law (%s; of the harness's rules of this mode its law explains the outcomes best, mean log-likelihood %.4g over %d steps)",
				f.Name, f.Summary, f.MeanLogLik, f.Steps)
		}
	}
	name := "token"
	if inv.tree {
		name = losslessTreeRule(inv.draft, r.Algorithm)
	}
	if name == "" || name == r.Algorithm {
		return "", ""
	}
	return name, fmt.Sprintf("if the rule is meant to implement %s: tests its outcomes given the drafts against %s's exact law, which sees a deviation in how drafts are accepted (a temperature mismatch, say) with far fewer trials than the tests of the emitted law", name, name)
}

// violationCandidate is conformCandidate after a violation.
func violationCandidate(r resolve.Report, inv invocation) (string, string) {
	ex, nominal, ok := check.Explaining(r.Fits, r.Level)
	for _, e := range ex {
		if e.Name != r.Algorithm && modeRule(e.Name, inv.tree) {
			return e.Name, fmt.Sprintf("tests the outcomes given the drafts against the lossy rule or planted bug %s's exact law (%s; its log-likelihood beats the best lossless rule's, %s's, by %.4g over %d steps, more than chance)",
				e.Name, e.Summary, nominal.Name, e.Gap, e.Steps)
		}
	}
	for _, f := range r.Fits { // best first: the lossless rule of this mode that explains them best
		if ok && f.Lossless && f.Name != r.Algorithm && r.Mode != "conform:"+f.Name && modeRule(f.Name, inv.tree) {
			return f.Name, fmt.Sprintf("no named rule explains the outcomes better than chance; tests them against the lossless rule of this mode whose law explains them best, %s (%s), whose conformance test includes its edge cases", f.Name, f.Summary)
		}
	}
	return "", ""
}

// registeredLossless reports whether name is one of the harness's
// lossless rules of the mode (not lossy, not a planted bug): a rule that
// implements no other named rule, so no conformance test is suggested.
func registeredLossless(name string, tree bool) bool {
	if tree {
		e, err := algos.LookupTree(name)
		return err == nil && !e.Lossy && !e.Mutant
	}
	e, err := algos.Lookup(name)
	return err == nil && !e.Lossy && !e.Mutant
}

// modeRule reports whether name is a rule of the check's mode (a tree
// rule in tree mode, a chain rule otherwise).
func modeRule(name string, tree bool) bool { return algos.IsTree(name) == tree }

// losslessTreeRule is the first lossless tree rule (by name) registered
// for draft kind draft, other than not; "" if none.
func losslessTreeRule(draft, not string) string {
	kind, err := sim.ParseDraftKind(draft)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range algos.AllTree() {
		if !e.Lossy && !e.Mutant && e.Draft == kind && e.Name != not {
			names = append(names, e.Name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}
