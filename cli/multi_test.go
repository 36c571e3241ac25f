package cli

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// runJSON runs simulate in-process and returns its stdout decoded as a
// JSON object (nil when it exits other than ExitOK), exit code and stderr.
func runJSON(t *testing.T, args ...string) (map[string]any, int, string) {
	t.Helper()
	code, out, errs := runCLI(args...)
	if code != diag.ExitOK {
		return nil, code, errs
	}
	return decodeJSON(t, fmt.Sprint(args), out), code, errs
}

// simulate exact --algo specinfer --k 3: lossless, and at depth 1 the
// acceptance stays below 'simulate bound' for the same pair (the Khisti toy
// at q2 = 0.1: α* = 0.937667 with replacement, by exhaustive search).
func TestExactTreeAndBoundCommands(t *testing.T) {
	p, q := "1/3,1/3,1/3", "1/3,0.1,17/30"
	ex, code, stderr := runJSON(t, "exact", "--algo", "specinfer", "--k", "3", "--gamma", "1", "--p", p, "--q", q, "--seed", "1", "--json")
	if code != diag.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, code, stderr := runJSON(t, "bound", "--k", "3", "--replacement=true", "--p", p, "--q", q, "--json")
	if code != diag.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	acc, opt := ex["acceptance"].(float64), b["optimal_acceptance"].(float64)
	if ex["lossless"] != true || ex["max_abs_error"].(float64) >= 1e-12 {
		t.Errorf("specinfer not lossless: %v", ex["max_abs_error"])
	}
	// α* = min over A; A = {1}: 1 - 1/3 + 1 - 0.9³ = 0.937667.
	if math.Abs(opt-(2.0/3+1-0.729)) > 1e-12 || acc > opt+1e-12 || ex["optimal_acceptance"].(float64) != opt {
		t.Errorf("acceptance %.12g, optimal %.12g (exact reports %v)", acc, opt, ex["optimal_acceptance"])
	}
	wantKeys(t, "exact", ex, "expected_emitted", "acceptance", "max_abs_error", "lossless")
	if _, code, _ := runJSON(t, "exact", "--algo", "token", "--k", "2", "--p", p, "--q", q); code != diag.ExitUsage {
		t.Errorf("token with --k 2: exit %d, want %d", code, diag.ExitUsage)
	}
	if _, code, _ := runJSON(t, "bound", "--k", "0", "--p", p, "--q", q); code != diag.ExitUsage {
		t.Errorf("bound --k 0: exit %d, want %d", code, diag.ExitUsage)
	}
}

// simulate scenario fms-example: naive gives 1513/2048 exactly (see
// experiments.TestFMSExample for the derivation), shared-uniform 1/2, and
// the simulation intervals cover them.
func TestScenarioCommand(t *testing.T) {
	for algo, want := range map[string]float64{"naive": 1513.0 / 2048, "shared-uniform": 0.5} {
		m, code, stderr := runJSON(t, "scenario", "fms-example", "--algo", algo, "--trials", "20000", "--seed", "3", "--workers", "1", "--json")
		if code != diag.ExitOK {
			t.Fatalf("%s: exit %d: %s", algo, code, stderr)
		}
		exact := m["p_first_a_exact"].(float64)
		if math.Abs(exact-want) > 1e-12 || m["ci_lo"].(float64) > exact || m["ci_hi"].(float64) < exact {
			t.Errorf("%s: %v", algo, m)
		}
		wantKeys(t, "scenario", m, "p_first_a", "trials", "seed")
	}
	if _, code, _ := runJSON(t, "scenario", "nope"); code != diag.ExitUsage {
		t.Errorf("unknown scenario: exit %d", code)
	}
}
