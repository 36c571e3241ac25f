package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/table"
)

// sweepRows are a small generic sweep's rows: one axis, one metric.
func sweepRows(name string, metric ...float64) []table.Row {
	var rows []table.Row
	for i, m := range metric {
		rows = append(rows, table.Row{{K: "experiment", V: name}, {K: "V", V: int64(4 + i)}, {K: "alpha", V: m}})
	}
	return rows
}

// Issue 23, class 1: a merged table's experiment name is data. Names that
// would leave --out (../../victim/PWNED, an absolute path, a hidden name)
// are refused before anything is written, and nothing appears outside.
func TestBuildRefusesNamesThatLeaveOut(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"../../victim/PWNED", "/tmp/PWNED", "..", ".hidden", "a/b", "x\x1b[2J"} {
		root := t.TempDir()
		in := filepath.Join(root, "in", "deep")
		os.MkdirAll(in, 0o755)
		meta := results.Meta{results.KeyKind: "merged", results.KeyExperiment: name, results.KeySeed: "1"}
		if err := results.WriteFile(filepath.Join(in, "x.parquet"), sweepRows("x", 0.5, 0.6), meta); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(in, "out")
		_, err := BuildDir(in, out)
		if !errors.Is(err, fsutil.ErrBadName) || diag.KindOf(err) != diag.ErrUsage {
			t.Errorf("experiment %q: BuildDir = %v; want a usage error wrapping ErrBadName", name, err)
		}
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.Contains(p, "PWNED") {
				t.Errorf("experiment %q: wrote %s", name, p)
			}
			return nil
		})
		if _, err := os.Stat(out); err == nil {
			t.Errorf("experiment %q: %s was created", name, out)
		}
	}
}

// Metadata copied into report.md and numbers.tex is text: HTML and
// Markdown from a revision or seed, and TeX from a seed, come out escaped.
func TestBuildEscapesMetadata(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	meta := results.Meta{results.KeyKind: "merged", results.KeyExperiment: "mysweep",
		results.KeySeed: "1}\\immediate\\openout5=pwned.tex\n\n\\input{/etc/passwd}", results.KeyGitRevision: "<script>alert(1)</script>[x](javascript:y)"}
	if err := results.WriteFile(filepath.Join(dir, "mysweep.parquet"), sweepRows("mysweep", 0.5, 0.6), meta); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildDir(dir, ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>", "[x](javascript", "\\immediate\\openout"} {
		if strings.Contains(string(md), bad) {
			t.Errorf("report.md holds %q unescaped", bad)
		}
	}
	if !strings.Contains(string(md), "&lt;script&gt;") {
		t.Errorf("report.md lost the revision's text")
	}
	b, err := LoadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	tex := NumbersTeX(Numbers(b))
	seedLine := strings.SplitN(tex, "\n", 3)[1]
	if !strings.HasPrefix(seedLine, `\newcommand{\Seed}{1\}\textbackslash{}immediate\textbackslash{}openout5=pwned.tex  \textbackslash{}input\{/etc/passwd\}}`) {
		t.Errorf("numbers.tex seed line %q", seedLine)
	}
}
