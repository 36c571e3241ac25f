package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// TestMemBudgetFlag: --mem-budget reaches every command that builds a
// source or reads a log (it is an explicit value passed down, not a
// global): under 1e-6 GiB (1073 B; every source and log row below needs
// more) each refuses with a usage error that states the budget. The log
// replays under the default budget, and the other commands succeed under
// it elsewhere in this package's tests.
func TestMemBudgetFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "m.parquet")
	if code, _, errs := runCLI("log-synthetic", "--source", "dirichlet:V=100,contexts=1", "--steps", "5", "--gamma", "2", "--out", log); code != diag.ExitOK {
		t.Fatalf("log-synthetic: exit %d: %s", code, errs)
	}
	spec := filepath.Join(dir, "s.toml")
	text := "experiment = \"verify\"\n[axes]\nsource = [\"markov:V=8,order=2\"]\nalgo = [\"token\"]\ngamma = [2]\n"
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("replay", log); code != diag.ExitOK {
		t.Fatalf("replay under the default budget: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{
		{"check", "--source", "dirichlet:V=100,contexts=2", "--gamma", "2", "--trials", "100"},
		{"check", "--source", "markov:V=8,order=2", "--gamma", "2", "--trials", "100"},
		{"exact", "--source", "markov:V=8,order=2", "--gamma", "2"},
		{"exact", "--algo", "specinfer", "--source", "markov:V=8,order=2", "--k", "2", "--gamma", "2"},
		{"describe", "zipf:V=100,contexts=1"},
		{"log-synthetic", "--source", "temperature:V=100,contexts=1", "--steps", "5", "--gamma", "2", "--out", filepath.Join(dir, "t.parquet")},
		{"replay", log},
		{"validate-log", log},
		{"run", spec},
		{"smc", "--source", "markov:V=8,order=2", "--runs", "10"},
		{"bench", "--vocab", "100", "--seconds", "0.01", "--pool-mib", "1"},
		{"bench", "--algo", "specinfer", "--vocab", "100", "--seconds", "0.01"},
	} {
		code, _, errs := runCLI(append([]string{"--mem-budget", "0.000001"}, args...)...)
		if code != diag.ExitUsage || !strings.Contains(errs, "above the memory budget of 1.0 KiB") {
			t.Errorf("%s under 1 KiB: exit %d, want usage naming the budget: %s", strings.Join(args, " "), code, errs)
		}
	}
}
