package report

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/experiments/sweep"
)

// A user-written TOML sweep gets figures and a table from 'report build'
// with no code of its own: run, merge, build, as the README says.
func TestBuildUserSweep(t *testing.T) {
	dir := t.TempDir()
	if _, err := sweep.Execute(context.Background(), sweep.RunOptions{Target: "testdata/mysweep.toml", Out: dir, Scale: 1, Workers: 1, Log: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(dir, "", false); err != nil {
		t.Fatal(err)
	}
	files, err := BuildDir(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	// gamma and algo are swept (source and trials are not): one figure
	// each, in every format, and the table
	for _, f := range []string{"figures/verify-vs-gamma.png", "figures/verify-vs-gamma.svg", "figures/verify-vs-gamma.pdf",
		"figures/verify-vs-algo.svg", "tables/verify.md", "tables/verify.csv", "report.md"} {
		if !slices.Contains(files, filepath.Join(dir, f)) {
			t.Errorf("report build wrote no %s (wrote %v)", f, files)
		}
	}
	if slices.Contains(files, filepath.Join(dir, "figures/verify-vs-trials.svg")) {
		t.Error("a figure against trials, which has one value")
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# specsim: results\n", "## Sweep verify", "figures/verify-vs-gamma.png", "| source | algo | gamma | trials | mean_emitted | mean_emitted 95% CI |",
		"| verify | 6 | ", "| `merged.parquet` |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// a user's sweep is not the main job: report.md does not call it the
	// reproduced results nor point under runs/ (it did)
	if strings.Contains(string(md), "reproduced") || strings.Contains(string(md), "runs/") {
		t.Errorf("a user sweep's report.md calls itself reproduced results under runs/:\n%s", firstLines(string(md), 6))
	}
	// 2 rules × 3 γ rows
	b, err := LoadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	figs := SweepFigures(b)
	if len(figs) != 2 {
		t.Fatalf("%d sweep figures, want 2 (algo, gamma)", len(figs))
	}
	for _, f := range figs {
		// panels: mean_emitted, alpha_hat, exact_emitted (the _lo/_hi are its band)
		if len(f.Panels) != 3 {
			t.Errorf("%s: %d panels, want 3", f.Name, len(f.Panels))
		}
	}
	if got := figs[1].LegendNames(); !slices.Equal(got, []string{"algo=token", "algo=block"}) {
		t.Errorf("%s legend %v, want one curve per algo", figs[1].Name, got)
	}
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
