package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim/run"
)

var (
	tinyOnce sync.Once
	tinyDir  string
	tinyErr  error
)

// tiny runs the main job at scale 0.01 once per test binary (no PDF).
func tiny(t *testing.T) string {
	t.Helper()
	tinyOnce.Do(func() {
		tinyDir, tinyErr = os.MkdirTemp("", "specsim-reproduce-")
		if tinyErr != nil {
			return
		}
		var log bytes.Buffer
		tinyErr = Reproduce(context.Background(), ReproduceOptions{Out: tinyDir, Seed: 1, Scale: 0.01, Workers: 2,
			Experiments: MainExperiments, Log: &log})
		if tinyErr == nil && !strings.Contains(log.String(), "audit: done") {
			t.Logf("progress log:\n%s", log.String())
		}
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	return tinyDir
}

// The main job end to end at a tiny scale: every experiment stored and
// merged, every figure and table written, report.md naming them, and the
// exact numbers equal to the experiments' own.
func TestReproduceTiny(t *testing.T) {
	dir := tiny(t)
	for _, name := range MainExperiments {
		if _, err := os.Stat(filepath.Join(dir, "runs", name, "merged.parquet")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "csv", name+".csv")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(report), "# specsim: reproduced results\n") || !strings.Contains(string(report), "| `runs/audit/merged.parquet` |") {
		t.Errorf("the main job's report.md does not call itself the reproduced results with its tables' files:\n%s", firstLines(string(report), 8))
	}
	for _, fig := range []string{"leviathan-tokens", "leviathan-walltime", "block-vs-token", "lossy-frontier", "multidraft", "replay", "drafters", "dynamic-gamma", "audit", "smc-forbid-end-expert"} {
		for _, ext := range []string{"png", "svg", "pdf"} {
			if st, err := os.Stat(filepath.Join(dir, "figures", fig+"."+ext)); err != nil || st.Size() < 1000 {
				t.Errorf("figure %s.%s: %v", fig, ext, err)
			}
		}
		if !strings.Contains(string(report), "figures/"+fig+".png") {
			t.Errorf("report.md does not show %s", fig)
		}
	}
	for _, tab := range []string{"leviathan-table1", "leviathan-tokens", "leviathan-walltime", "block-vs-token", "lossy-frontier",
		"lenience-table", "multidraft", experiments.ScenariosName, "audit", experiments.ReplayName, "drafters", "dynamic-gamma", "smc-steering"} {
		for _, ext := range []string{"md", "tex", "csv"} {
			if _, err := os.Stat(filepath.Join(dir, "tables", tab+"."+ext)); err != nil {
				t.Errorf("table %s.%s: %v", tab, ext, err)
			}
		}
		if !strings.Contains(string(report), "tables/"+tab+".csv") {
			t.Errorf("report.md does not show table %s", tab)
		}
	}
	b, err := LoadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	nums := map[string]string{}
	for _, n := range Numbers(b) {
		nums[n.Name] = n.Value
		if n.Value == "n/a" || n.Value == "–" {
			t.Errorf("number %s is %q", n.Name, n.Value)
		}
	}
	// exact values: Table 1 matches in all 6 cells (Leviathan et al.
	// Table 1); Eq. 1 at α = 0.8, γ = 4 is (1−0.8⁵)/0.2 = 3.3616; seed
	// 002's naive fms-example P(first = a) = 1513/2048 = 0.7388; shared-
	// uniform exactly ½; best-candidate covers ¼ in fms-coverage.
	for k, v := range map[string]string{"TableOneMatches": "6", "TableOneCells": "6", "TokensEightFour": "3.3616",
		"FmsNaive": "0.7388", "FmsShared": "0.5000", "FmsBestCoverage": "0.25", "FmsSharedCoverage": "1.00", "Seed": "1"} {
		if nums[k] != v {
			t.Errorf("%s = %q, want %q", k, nums[k], v)
		}
	}
	// Rerunning resumes: nothing is recomputed and the tables are equal.
	before, _ := results.ReadFile(filepath.Join(dir, "runs", "multidraft", "merged.parquet"))
	var log bytes.Buffer
	if err := Reproduce(context.Background(), ReproduceOptions{Out: dir, Seed: 1, Scale: 0.01, Workers: 1,
		Experiments: []string{"multidraft"}, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "0 cells computed") {
		t.Errorf("re-run recomputed cells:\n%s", log.String())
	}
	// where the kernel reports CPU time, each experiment's line gives its
	// share of it
	if done := regexp.MustCompile(`done: .* in [0-9.]+s, [0-9.]+s CPU\n`); run.ProcessCPU() > 0 && !done.MatchString(log.String()) {
		t.Errorf("no CPU time on the experiment's line:\n%s", log.String())
	}
	after, _ := results.ReadFile(filepath.Join(dir, "runs", "multidraft", "merged.parquet"))
	if err := results.SameRows(before.Rows, after.Rows); err != nil {
		t.Error(err)
	}
}

// The paper builds from the tiny results with no LaTeX warning and no
// overfull or underfull box in its log; every figure and table is set
// within a page of a reference to it; its PDF carries its metadata and no
// date; and building it again from freshly written inputs gives the same
// bytes.
func TestPaperBuild(t *testing.T) {
	if _, err := exec.LookPath("latexmk"); err != nil {
		t.Skip("latexmk is not installed; apt-get install texlive-latex-base texlive-latex-recommended latexmk to build the paper")
	}
	b, err := LoadBundle(tiny(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WritePaper(b, dir, false); err != nil {
		t.Fatal(err)
	}
	if err := BuildPDF(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	pdf, err := os.ReadFile(filepath.Join(dir, "paper.pdf"))
	if err != nil || len(pdf) < 10000 {
		t.Fatalf("paper.pdf: %d bytes, %v", len(pdf), err)
	}
	problems, err := LogProblems(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("paper.log: %s", p)
	}
	placement, err := FloatPlacement(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range placement {
		t.Errorf("float placement: %s", p)
	}
	if _, err := exec.LookPath("pdfinfo"); err == nil {
		out, err := exec.Command("pdfinfo", filepath.Join(dir, "paper.pdf")).Output()
		if err != nil {
			t.Fatal(err)
		}
		info := string(out)
		for _, want := range []string{"Title:           specsim: testing and measuring", "Author:          The specsim developers",
			"Subject:         Speculative decoding", "Keywords:        speculative decoding,"} {
			if !strings.Contains(info, want) {
				t.Errorf("pdfinfo lacks %q:\n%s", want, info)
			}
		}
		for _, date := range []string{"CreationDate:", "ModDate:"} {
			if strings.Contains(info, date) {
				t.Errorf("the PDF carries a %s a rebuild would change it:\n%s", date, info)
			}
		}
	}
	// every macro the paper uses is defined by numbers.tex
	src, _ := os.ReadFile(filepath.Join(dir, "paper.tex"))
	for _, n := range Numbers(b) {
		if !strings.Contains(string(src), `\`+n.Name) {
			t.Logf("number %s is not quoted in the paper", n.Name)
		}
	}
	// the same inputs written and built again give the same bytes
	again := t.TempDir()
	if err := WritePaper(b, again, false); err != nil {
		t.Fatal(err)
	}
	if err := BuildPDF(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	if pdf2, err := os.ReadFile(filepath.Join(again, "paper.pdf")); err != nil || !bytes.Equal(pdf, pdf2) {
		t.Errorf("a second build differs from the first (%d and %d bytes, %v)", len(pdf), len(pdf2), err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tinyDir != "" {
		os.RemoveAll(tinyDir)
	}
	os.Exit(code)
}
