package cli

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/seq"
)

// A command that measured nothing prints n/a, never a 0 that reads like a
// measurement: a check interrupted before its first trial, a generation
// stopped before its first step, a tree generation's mean β.
func TestNothingMeasuredPrintsNA(t *testing.T) {
	var b bytes.Buffer
	printCheck(&b, newCheckJSON(resolve.Report{}, 0, invocation{}))
	if out := b.String(); !strings.Contains(out, "alpha_hat n/a, mean accepted n/a, mean emitted n/a [n/a, n/a]") {
		t.Errorf("check with 0 trials:\n%s", out)
	}
	b.Reset()
	nan := math.NaN()
	var r seq.Report
	r.TokensPerCall, r.TokensPerCallCI, r.Acceptance, r.MeanAcceptedLength, r.MeanBeta = nan, [2]float64{nan, nan}, nan, nan, nan
	r.Speedup, r.SpeedupCI = nan, [2]float64{nan, nan}
	printGenerate(&b, r)
	out := b.String()
	for _, want := range []string{"tokens per target call n/a [n/a, n/a]", "mean beta n/a", "speedup n/a [n/a, n/a]"} {
		if !strings.Contains(out, want) {
			t.Errorf("generate with nothing generated: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "0.0000 [0.0000, 0.0000]") {
		t.Errorf("generate prints zeros for nothing:\n%s", out)
	}
}

// Every command's --seed help states its default once (it read "master
// seed (default 1); ... (default: 0)", two defaults, one of them wrong).
func TestSeedHelpOneDefault(t *testing.T) {
	n := 0
	for _, name := range []string{"audit", "bench", "check", "describe", "exact", "generate", "log-synthetic", "replay", "run", "scenario", "slurm", "smc"} {
		code, out, errs := runCLI(name, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d: %s", name, code, errs)
		}
		for _, l := range strings.Split(out, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "--seed ") {
				continue
			}
			n++
			if c := strings.Count(l, "default"); c != 1 {
				t.Errorf("%s: --seed help names %d defaults: %s", name, c, strings.TrimSpace(l))
			}
			if strings.Contains(l, "(default: 0)") {
				t.Errorf("%s: --seed help says the default is 0 (the clock): %s", name, strings.TrimSpace(l))
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d --seed lines found", n)
	}
}
