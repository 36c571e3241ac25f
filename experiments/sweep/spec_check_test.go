package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

// TestSpecCellsCheckedAtLoad (issue 12): a bad axis value fails when the
// spec is parsed, naming the axis and the value, not when its cell runs.
func TestSpecCellsCheckedAtLoad(t *testing.T) {
	t.Parallel()
	head := "experiment = \"verify\"\n[axes]\nalgo = [\"token\"]\n"
	for _, c := range []struct{ axes, want string }{
		{"source = [\"markov:V=4,order=1\"]\nvocab = [4, -3]", "axis vocab: -3"},
		{"source = [\"markov:V=4,order=1\"]\nvocab = [4, 100000]", "V = 100000"},
		{"source = [\"markov:V=4,order=1,a=0\"]", "a = 0"},
		{"source = [\"markov:V=4,a=1e10\"]", "(0, 1e6]"},
		{"source = [\"zipf:V=8\"]\ngamma = [2, 99]", "axis gamma: 99"},
	} {
		_, err := ParseSpec(head + c.axes + "\n")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.axes, err, c.want)
		}
	}
	if _, err := ParseSpec(head + "source = [\"markov:V=4,order=1\"]\nvocab = [4, 8]\n"); err != nil {
		t.Errorf("a good spec: %v", err)
	}
}

// TestSpecMemBudget: a spec's sources are checked against the front
// end's memory budget (not the spec's), before any cell runs: a pool of
// 11.8 GiB parses, fails CheckMem and Execute under the default budget of
// 4 GiB with the budget's message, and passes CheckMem under 12 GiB.
func TestSpecMemBudget(t *testing.T) {
	t.Parallel()
	text := "experiment = \"verify\"\n[axes]\nalgo = [\"token\"]\nsource = [\"dirichlet:V=4194304\"]\ngamma = [4]\n"
	s, err := ParseSpec(text)
	if err != nil {
		t.Fatalf("parsing: %v", err)
	}
	if err := s.CheckMem(0); !errors.Is(err, sim.ErrMemBudget) || !strings.Contains(err.Error(), "--mem-budget") {
		t.Errorf("CheckMem(default): %v, want ErrMemBudget naming --mem-budget", err)
	}
	if err := s.CheckMem(12 << 30); err != nil {
		t.Errorf("CheckMem(12 GiB): %v", err)
	}
	path := filepath.Join(t.TempDir(), "big.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), RunOptions{Target: path, Seed: 1, Scale: 1})
	if !errors.Is(err, sim.ErrMemBudget) {
		t.Errorf("Execute under the default budget: %v, want ErrMemBudget", err)
	}
}

// TestSpecHugeGrid: a grid beyond MaxCells fails at once, before any
// cell is allocated (it used to try to allocate 153 TB after 33 s).
func TestSpecHugeGrid(t *testing.T) {
	t.Parallel()
	vals := make([]string, 1000)
	for i := range vals {
		vals[i] = strconv.Itoa(i + 1)
	}
	list := "[" + strings.Join(vals, ", ") + "]"
	text := "experiment = \"verify\"\n[axes]\nsource = [\"markov:V=4\"]\nalgo = [\"token\"]\ntrials = " + list + "\nreplicate = " + list + "\ngamma = [1, 2, 3]\n"
	_, err := ParseSpec(text)
	if err == nil || !strings.Contains(err.Error(), "more than 1000000 cells") {
		t.Fatalf("a 3e6-cell grid: %v, want the MaxCells error", err)
	}
}

// An experiment without a grid (fms-scenarios, which the main job
// computes whole) cannot be swept: a spec or a run naming it fails with
// the reason, as a usage error from Execute.
func TestSpecNoGrid(t *testing.T) {
	t.Parallel()
	const want = "experiment fms-scenarios has no grid of cells to sweep"
	if _, err := ParseSpec("experiment = \"fms-scenarios\"\n"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseSpec: %v, want %q", err, want)
	}
	_, err := Execute(context.Background(), RunOptions{Target: "fms-scenarios", Scale: 1})
	if !errors.Is(err, diag.ErrUsage) || !strings.Contains(err.Error(), want) {
		t.Errorf("Execute: %v, want a usage error %q", err, want)
	}
}
