package cli

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// Unit cases: a check that detected nothing suggests the trials that
// halve the finest TV with the time from its cost model, and the
// conformance test of its mode (token for chains, the lossless tree rule
// of the draft kind for trees, never the rule itself); with fits, the
// best fit of the mode; a violation suggests --conform to the closest
// rule or planted bug.
func TestNextSteps(t *testing.T) {
	inv := invocation{args: []string{"simulate", "check", "--algo", "mutant-q-mismatch"},
		cost: costModel{ok: true, fixed: 1, perTrial: 2e-3, fromTwoPoints: true}}
	r := resolve.Report{Algorithm: "mutant-q-mismatch", Result: check.Result{Verdict: check.NotDetected, Mode: "lossless", Trials: 1000, MoreTrials: 4000, MinDetectableTV: 0.02}}
	got := nextSteps(r, inv)
	if len(got) != 2 || got[0].Command != "simulate check --algo mutant-q-mismatch --trials 4000" ||
		!strings.Contains(got[0].Why, "about 9 s") || !strings.Contains(got[0].Why, "1 s fixed") ||
		got[1].Command != "simulate check --algo mutant-q-mismatch --trials 1000 --conform token" {
		t.Errorf("no fits: %+v", got)
	}
	r.Fits = []check.Fit{{Name: "mutant-q-mismatch"}, {Name: "specinfer", Lossless: true}, {Name: "token", Lossless: true, MeanLogLik: -1, Steps: 10}}
	if got := nextSteps(r, inv); len(got) != 2 || !strings.HasSuffix(got[1].Command, "--conform token") || !strings.Contains(got[1].Why, "explains the outcomes best") {
		t.Errorf("fits: the chain check suggests %+v; want token, the best lossless chain rule", got)
	}
	r.Verdict = check.Violated
	if got := nextSteps(r, inv); len(got) != 1 || !strings.HasSuffix(got[0].Command, "--conform token") || !strings.Contains(got[0].Why, "no named rule explains") {
		t.Errorf("violated, nothing explains: %+v", got)
	}
	// a planted bug 200 above token over 100 steps: more than chance,
	// ln(1/0.01) = 4.6 for the one rule that is not lossless
	r.Fits = []check.Fit{{Name: "mutant-resample-p", MeanLogLik: -1, Steps: 100}, {Name: "token", Lossless: true, MeanLogLik: -3, Steps: 100}}
	if got := nextSteps(r, inv); len(got) != 1 || !strings.HasSuffix(got[0].Command, "--conform mutant-resample-p") || !strings.Contains(got[0].Why, "planted bug") {
		t.Errorf("violated, a mutant fits best: %+v", got)
	}
	// 4 above over 100 steps is chance: token is suggested
	r.Fits[0].MeanLogLik = -2.96
	if got := nextSteps(r, inv); len(got) != 1 || !strings.HasSuffix(got[0].Command, "--conform token") {
		t.Errorf("violated, a mutant fits best by chance: %+v", got)
	}
	tr := resolve.Report{Algorithm: "specinfer", Result: check.Result{Verdict: check.NotDetected, Mode: "lossless", Trials: 1000}}
	for _, s := range nextSteps(tr, invocation{args: []string{"simulate", "check"}, tree: true, draft: "iid"}) {
		if strings.Contains(s.Command, "--conform specinfer") || strings.Contains(s.Command, "--conform token") {
			t.Errorf("tree mode suggests %s", s.Command)
		}
	}
}

// shellWords splits a command of nextStep (words, or single-quoted words
// with '\” for a quote) into its arguments.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	in, have := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			in, have = !in, true
		case c == ' ' && !in:
			if have {
				out = append(out, b.String())
			}
			b.Reset()
			have = false
		case c == '\\' && !in && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			have = true
		default:
			b.WriteByte(c)
			have = true
		}
	}
	if have {
		out = append(out, b.String())
	}
	return out
}

// Every next step a check prints is a command the CLI accepts: checks in
// chain and tree mode, lossless and conformance, detected and violated
// (and, where a NumPy python exists, the external chain, step, tree and
// --rows modes) are run, and each suggestion is run in turn (its trials
// cut to 2,000) and must not be a usage error.
func TestNextStepsRun(t *testing.T) {
	cases := [][]string{
		{"check", "--algo", "token", "--source", "markov:V=4,order=1,seed=2"},
		{"check", "--algo", "mutant-q-mismatch", "--source", "markov:V=4,order=1,seed=2"},
		{"check", "--algo", "mutant-resample-p", "--source", "dirichlet:V=50,contexts=4"},
		{"check", "--algo", "specinfer", "--k", "2", "--gamma", "2", "--source", "markov:V=4,order=1,seed=2"},
		{"check", "--algo", "topk-ratio", "--k", "2", "--gamma", "2", "--source", "markov:V=4,order=1,seed=2"},
		{"check", "--algo", "rrs-wor", "--k", "2", "--gamma", "2", "--draft", "wor", "--branch", "2,1", "--source", "markov:V=4,order=1,seed=2"},
		{"check", "--algo", "lenience", "--param", "l=0.5", "--conform", "lenience", "--source", "markov:V=4,order=1,seed=2"},
	}
	if py, err := exec.LookPath("/usr/bin/python3"); err == nil && exec.Command(py, "-c", "import numpy").Run() == nil {
		ext := func(fn string) string { return py + " -m specsim_ext ../examples/python/" + fn }
		cases = append(cases,
			[]string{"check", "--external", ext("numpy_verify.py:verify"), "--source", "dirichlet:V=50,contexts=4"},
			[]string{"check", "--external", ext("numpy_verify.py:step_sampled"), "--mode", "step", "--source", "dirichlet:V=50,contexts=4"},
			[]string{"check", "--external", ext("tree_verify.py:specinfer"), "--mode", "tree", "--source", "markov:V=6,order=1,seed=1"},
			[]string{"check", "--external", ext("batch_samplers.py:engine"), "--rows", "engine", "--source", "dirichlet:V=50,contexts=12"},
		)
	} else {
		t.Log("no /usr/bin/python3 with NumPy: the external modes' next steps are not run")
	}
	t.Setenv("PYTHONPATH", "../python")
	seen := 0
	for _, c := range cases {
		code, out, errs := runCLI(append(c, "--trials", "4000", "--seed", "1", "--json")...)
		if code == diag.ExitUsage {
			t.Fatalf("%v: exit %d: %s", c, code, errs)
		}
		var res struct{ Next []nextStep }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		for _, n := range res.Next {
			args := shellWords(n.Command)
			for i := range args {
				if args[i] == "--trials" && i+1 < len(args) {
					args[i+1] = "2000"
				}
			}
			if args[0] != "simulate" {
				t.Errorf("%v: next step %q is not a simulate command", c, n.Command)
				continue
			}
			seen++
			if code, _, errs := runCLI(append(args[1:], "--json")...); code == diag.ExitUsage {
				t.Errorf("%v: the next step %q is refused: %s", c, n.Command, strings.TrimSpace(errs))
			}
		}
	}
	if seen < len(cases) {
		t.Errorf("only %d next steps over %d checks", seen, len(cases))
	}
}
