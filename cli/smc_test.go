package cli

import (
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// TestSMCCommand: 'simulate smc --json' prints the documented fields, the
// correct scheme exits 0 and the same numbers for 1 and 2 workers, a
// planted bug exits ExitViolated, a bad flag ExitUsage.
func TestSMCCommand(t *testing.T) {
	t.Parallel()
	args := []string{"smc", "--runs", "4000", "--n", "8", "--seed", "7", "--json"}
	code, out1, errs := runCLI(append(args, "--workers", "1")...)
	if code != diag.ExitOK {
		t.Fatalf("fc: exit %d: %s", code, errs)
	}
	r := decodeJSON(t, "smc", out1, "z_exact", "z_hat_mean", "z_hat_ci95", "relative_variance", "posterior_tv", "mean_ess", "verdict", "seed", "z_test", "convergence", "particle_count_mean")
	if r["verdict"] != "not_detected" || r["seed"] != 7.0 {
		t.Errorf("verdict %v seed %v", r["verdict"], r["seed"])
	}
	if _, out2, _ := runCLI(append(args, "--workers", "2")...); out2 != out1 {
		t.Errorf("1 and 2 workers differ:\n%s\n%s", out1, out2)
	}
	if code, _, errs := runCLI("smc", "--runs", "4000", "--n", "8", "--seed", "7", "--scheme", "mutant-no-reset"); code != diag.ExitViolated {
		t.Errorf("mutant-no-reset: exit %d, want %d: %s", code, diag.ExitViolated, errs)
	}
	for _, bad := range [][]string{{"--scheme", "nope"}, {"--potential", "forbid:9"}, {"--k", "2", "--scheme", "is"}, {"--prompt", "a"}, {"--source", "dirichlet:V=8"}} {
		if code, _, errs := runCLI(append([]string{"smc", "--runs", "10"}, bad...)...); code != diag.ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", bad, code, diag.ExitUsage, errs)
		}
	}
}
