package report

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
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

// Issue 23, class 4 and 5: values a run can produce (0, NaN, ±Inf, in an
// axis or a metric, and an empty table) never hang or crash report build:
// it ends, and every figure and table it writes is a file.
func TestBuildNonFinite(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	for name, rows := range map[string][]table.Row{
		"axisnan": {
			{{K: "experiment", V: "axisnan"}, {K: "x", V: nan}, {K: "m", V: 0.5}},
			{{K: "experiment", V: "axisnan"}, {K: "x", V: 1.0}, {K: "m", V: 0.6}},
		},
		"axisinf": {
			{{K: "experiment", V: "axisinf"}, {K: "x", V: inf}, {K: "m", V: 0.5}},
			{{K: "experiment", V: "axisinf"}, {K: "x", V: -inf}, {K: "m", V: 0.6}},
			{{K: "experiment", V: "axisinf"}, {K: "x", V: 1.0}, {K: "m", V: 0.7}},
		},
		"metrics": {
			{{K: "experiment", V: "metrics"}, {K: "x", V: int64(1)}, {K: "m", V: nan}, {K: "m_lo", V: -inf}, {K: "m_hi", V: inf}},
			{{K: "experiment", V: "metrics"}, {K: "x", V: int64(2)}, {K: "m", V: inf}, {K: "m_lo", V: 0.0}, {K: "m_hi", V: nan}},
			{{K: "experiment", V: "metrics"}, {K: "x", V: int64(3)}, {K: "m", V: 0.0}, {K: "m_lo", V: 0.0}, {K: "m_hi", V: 0.0}},
		},
		"allnan": {
			{{K: "experiment", V: "allnan"}, {K: "x", V: nan}, {K: "m", V: nan}},
			{{K: "experiment", V: "allnan"}, {K: "x", V: nan}, {K: "m", V: nan}},
		},
		"huge": {
			{{K: "experiment", V: "huge"}, {K: "x", V: 1e308}, {K: "m", V: -1e308}},
			{{K: "experiment", V: "huge"}, {K: "x", V: -1e308}, {K: "m", V: 1e308}},
			{{K: "experiment", V: "huge"}, {K: "x", V: 5e-324}, {K: "m", V: 0.0}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := results.WriteFile(filepath.Join(dir, name+".parquet"), rows, results.Meta{results.KeyKind: "merged", results.KeyExperiment: name}); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := BuildDir(dir, ""); done <- err }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("BuildDir: %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("report build did not end within 60 s")
			}
			if _, err := os.Stat(filepath.Join(dir, "tables", name+".md")); err != nil {
				t.Error(err)
			}
		})
	}
}

// The main job's own figures on rows whose every float is 0, NaN, +Inf
// or -Inf (smc-steering, block-vs-token and replay crashed or hung on
// them): report build ends with its files, within a minute.
func TestBuildMainJobNonFinite(t *testing.T) {
	dir := tiny(t)
	for _, v := range []float64{0, math.NaN(), math.Inf(1), math.Inf(-1)} {
		out := t.TempDir()
		for _, name := range []string{"smc-steering", "block-vs-token", experiments.ReplayName} {
			tab, err := results.ReadFile(filepath.Join(dir, "runs", name, "merged.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range tab.Rows {
				for i := range r {
					if _, ok := r[i].V.(float64); ok {
						r[i].V = v
					}
				}
			}
			if err := results.WriteFile(filepath.Join(out, name+".parquet"), tab.Rows, tab.Meta); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() { _, err := BuildDir(out, ""); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("floats = %g: %v", v, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("floats = %g: report build did not end", v)
		}
	}
}

// Issue 23: two report reproduce runs into one directory: the second is
// refused at once while the first holds the directory's lock.
func TestReproduceLocked(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	unlock, err := fsutil.LockDir(out)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = Job(context.Background(), ReproduceOptions{Out: out, Seed: 1, Scale: 0.01, Experiments: []string{"leviathan-table1"}})
	if !errors.Is(err, fsutil.ErrLocked) || diag.KindOf(err) != diag.ErrUsage {
		t.Errorf("a second reproduce: %v; want ErrLocked, a usage error", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("the refused run wrote into the directory: %d entries", len(ents))
	}
}
