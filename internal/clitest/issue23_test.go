package clitest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/table"
)

// hostile23 is one row of TestHostileData: a command line built on the
// fixtures, its allowed exit codes, the files that must not change, and a
// check of what it left behind ("" when fine).
type hostile23 struct {
	class  int // the class (1 names and markup, 2 outputs, ...)
	name   string
	cmd    []string
	codes  []int
	inputs []string
	after  func() string
}

// mergedTable writes a merged results table at path with meta and two
// rows of a generic sweep.
func mergedTable(t *testing.T, path string, meta results.Meta) {
	t.Helper()
	rows := []table.Row{
		{{K: "experiment", V: "x"}, {K: "V", V: int64(4)}, {K: "alpha", V: 0.5}},
		{{K: "experiment", V: "x"}, {K: "V", V: int64(8)}, {K: "alpha", V: 0.6}},
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteFile(path, rows, meta); err != nil {
		t.Fatal(err)
	}
}

// noFileMatching reports a file under root whose path contains s.
func noFileMatching(root, s string) func() string {
	return func() string {
		found := ""
		filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err == nil && strings.Contains(p, s) {
				found = p
			}
			return nil
		})
		if found != "" {
			return "wrote " + found
		}
		return ""
	}
}

// fileLacks reports when the file at path holds one of bad.
func fileLacks(path string, bad ...string) func() string {
	return func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			return err.Error()
		}
		for _, s := range bad {
			if strings.Contains(string(b), s) {
				return path + " holds " + s
			}
		}
		return ""
	}
}

// stillA reports when path is no longer of the file type mode.
func stillA(path string, mode os.FileMode) func() string {
	return func() string {
		st, err := os.Lstat(path)
		if err != nil {
			return err.Error()
		}
		if st.Mode().Type() != mode.Type() {
			return path + " was replaced by a " + st.Mode().Type().String()
		}
		return ""
	}
}

// TestHostileData runs issue 23's classes of hostile input (variants of
// the examples, not their bytes) through the binaries and checks
// checkResult's contract (documented exit code, one stderr line, no panic,
// peak RSS under maxRSS) plus each row's own check: nothing written
// outside --out, no device or FIFO replaced, no markup copied.
func TestHostileData(t *testing.T) {
	f := makeFixtures(t)
	S, R := bin.simulate, bin.report
	d := f.dir
	// class 1: names and markup from a results file's metadata
	victimRoot := filepath.Join(d, "c1")
	mergedTable(t, filepath.Join(victimRoot, "in", "deeper", "evil.parquet"), results.Meta{results.KeyKind: "merged",
		results.KeyExperiment: "../../victim/PWNED", results.KeySeed: "1"})
	markup := filepath.Join(d, "c1m")
	mergedTable(t, filepath.Join(markup, "mysweep.parquet"), results.Meta{results.KeyKind: "merged", results.KeyExperiment: "mysweep",
		results.KeySeed: "7}\\immediate\\openout9=owned.tex", results.KeyGitRevision: "<img src=x onerror=alert(1)>\x1b]0;t\x07"})
	// class 2: outputs that are not regular files, inputs that block
	fifo := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	toNull := filepath.Join(d, "to-null")
	os.Symlink("/dev/null", toNull)
	toStdout := filepath.Join(d, "to-stdout")
	os.Symlink("/proc/self/fd/1", toStdout)
	spec := filepath.Join(d, "c2", "slurm", "sweep.sbatch")
	os.MkdirAll(filepath.Dir(spec), 0o755)
	os.WriteFile(spec, []byte("experiment = \"verify\"\nseed = 7\n[axes]\nsource = \"markov:V=3,order=1,a=0.5\"\nalgo = [\"token\", \"block\"]\n"), 0o644)
	manifest := filepath.Join(f.sweep, results.ManifestName)
	cases := []hostile23{
		{1, "report build of a table named ../../victim/PWNED", []string{R, "build", filepath.Join(victimRoot, "in", "deeper"), "--out", filepath.Join(victimRoot, "in", "deeper", "out")},
			[]int{exitUsage}, nil, noFileMatching(victimRoot, "PWNED")},
		{1, "report paper of a table named ../../victim/PWNED", []string{R, "paper", filepath.Join(victimRoot, "in", "deeper"), "--out", filepath.Join(victimRoot, "in", "deeper", "paper")},
			[]int{exitUsage}, nil, noFileMatching(victimRoot, "PWNED")},
		{1, "report build with HTML and terminal escapes in the revision", []string{R, "build", markup}, []int{exitOK}, nil,
			fileLacks(filepath.Join(markup, "report.md"), "<img", "\x1b")},
		{1, "report paper with TeX in the seed", []string{R, "paper", markup, "--out", filepath.Join(markup, "paper")}, []int{exitOK}, nil,
			fileLacks(filepath.Join(markup, "paper", "generated", "numbers.tex"), `\immediate`, `\openout`)},
		{2, "log-synthetic --out a link to /dev/null", []string{S, "log-synthetic", "--source", "markov:V=4,order=1,seed=7", "--steps", "5", "--seed", "1", "--out", toNull},
			[]int{exitUsage}, nil, stillA(toNull, os.ModeSymlink)},
		{2, "log-synthetic --out a FIFO", []string{S, "log-synthetic", "--source", "markov:V=4,order=1,seed=7", "--steps", "5", "--seed", "1", "--out", fifo},
			[]int{exitUsage}, nil, stillA(fifo, os.ModeNamedPipe)},
		{2, "import-log --out a link to stdout (a pipe)", []string{S, "import-log", "--in", f.jsonl, "--out", toStdout}, []int{exitUsage}, []string{f.jsonl}, stillA(toStdout, os.ModeSymlink)},
		{2, "report export --out a link to /dev/null", []string{R, "export", f.merged, "--out", toNull}, []int{exitUsage}, []string{f.sweep}, stillA(toNull, os.ModeSymlink)},
		{2, "replay --steps-out a FIFO", []string{S, "replay", "--log", f.log, "--steps-out", fifo, "--seed", "1"}, []int{exitUsage}, []string{f.log}, stillA(fifo, os.ModeNamedPipe)},
		{2, "report merge --out the sweep's manifest", []string{R, "merge", f.sweep, "--out", manifest}, []int{exitUsage}, []string{f.sweep}, nil},
		{2, "report merge --out the sweep's lock", []string{R, "merge", f.sweep, "--out", filepath.Join(f.sweep, ".lock")}, []int{exitUsage}, []string{f.sweep}, nil},
		{2, "slurm whose spec is the script it would write", []string{S, "slurm", spec, "--out", filepath.Join(d, "c2"), "--shards", "2", "--seed", "1"}, []int{exitUsage}, []string{spec}, nil},
		{2, "validate-log of a FIFO", []string{S, "validate-log", fifo}, []int{exitUsage}, nil, nil},
		{2, "replay of a FIFO", []string{S, "replay", "--log", fifo, "--seed", "1"}, []int{exitUsage}, nil, nil},
		{2, "run of a FIFO spec", []string{S, "run", fifo, "--seed", "1"}, []int{exitUsage}, nil, nil},
		{2, "report export of a FIFO", []string{R, "export", fifo}, []int{exitUsage}, nil, nil},
		{2, "run --out a FIFO", []string{S, "run", "leviathan-table1", "--out", fifo, "--seed", "1"}, []int{exitUsage}, nil, stillA(fifo, os.ModeNamedPipe)},
	}
	runHostile23(t, d, cases)
}

// listLog writes a log whose first row (V = 2, γ = 1) carries a p list of
// n floats, zstd-compressed to a few KB, as issue 23's hostile logs do.
func listLog(t *testing.T, path string, n, rows int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[data.LogRow](f, parquet.Compression(&zstd.Codec{}),
		parquet.KeyValueMetadata(data.MetaSchemaVersion, strconv.Itoa(data.SchemaVersion)))
	var out []data.LogRow
	for i := range rows {
		r := data.LogRow{SchemaVersion: int32(data.SchemaVersion), RunID: "r", Step: int64(i), Gamma: 1, VocabSize: 2,
			DraftTokens: []int32{0}, Emitted: []int32{0}, RowKind: "probs", Layout: "dense", TopP: 1,
			Q: []float32{0.5, 0.5}, P: []float32{0.5, 0.5, 0.5, 0.5}}
		if i == 0 {
			r.P = make([]float32, n)
		}
		out = append(out, r)
	}
	if _, err := w.Write(out); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHostileSizes: sizes read from input are checked against
// --mem-budget (or a stated limit) before anything is allocated (issue 23,
// class 3); checkResult bounds every row's peak RSS by maxRSS (1 GiB),
// the budget these rows give.
func TestHostileSizes(t *testing.T) {
	d := t.TempDir()
	S, R := bin.simulate, bin.report
	big := filepath.Join(d, "biglist.parquet")
	listLog(t, big, 12_000_000, 3)
	// a results table declaring many rows of nulls: a few KB on disk
	rows := make([]table.Row, 300_000)
	for i := range rows {
		rows[i] = table.Row{{K: "experiment", V: "x"}}
	}
	rows[0] = append(rows[0], table.KV{K: "alpha", V: 0.5})
	manyRows := filepath.Join(d, "rows.parquet")
	if err := results.WriteFile(manyRows, rows, results.Meta{results.KeyKind: "merged", results.KeyExperiment: "x"}); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(d, "nested.toml")
	os.WriteFile(nested, []byte("experiment = \"verify\"\nx = "+strings.Repeat("{a=", 3000)+"1"+strings.Repeat("}", 3000)+"\n"), 0o644)
	dotted := filepath.Join(d, "dotted.toml")
	os.WriteFile(dotted, []byte("experiment = \"verify\"\n"+strings.Repeat("k.", 3000)+"k = 1\n"), 0o644)
	var axis strings.Builder
	axis.WriteString("experiment = \"verify\"\n[axes]\nsource = \"markov:V=4,order=1\"\nalgo = [\"token\"]\ntrials = [")
	for i := range 100_000 {
		fmt.Fprintf(&axis, "%d,", 1000+i)
	}
	axis.WriteString("1000]\n") // a duplicate at the very end
	longAxis := filepath.Join(d, "axis.toml")
	os.WriteFile(longAxis, []byte(axis.String()), 0o644)
	sbatch := filepath.Join(d, "sbatch")
	os.WriteFile(sbatch, []byte("#!/bin/sh\nexec yes 'a job id that never ends'\n"), 0o755)
	frame := filepath.Join(d, "bigframe.sh")
	os.WriteFile(frame, []byte(bigFrameScript), 0o755)
	cases := []hostile23{
		{3, "replay of a log whose 3 rows declare 1.2e7 floats, --mem-budget 1", []string{S, "--mem-budget", "1", "replay", big, "--seed", "1"}, []int{exitUsage}, []string{big}, nil},
		{3, "validate-log of the same log, --mem-budget 0.5", []string{S, "--mem-budget", "0.5", "validate-log", big}, []int{exitUsage}, []string{big}, nil},
		{3, "report export of a table declaring 300k rows, --mem-budget 0.01", []string{R, "--mem-budget", "0.01", "export", manyRows}, []int{exitUsage}, []string{manyRows}, nil},
		{3, "check --external with --batch 1048576 on a model pair", []string{S, "--mem-budget", "1", "check", "--external", "false", "--source", "markov:V=64,order=1", "--batch", "1048576", "--seed", "1"}, []int{exitUsage}, nil, nil},
		{3, "an implementation replying with a frame of 1e8 int64", []string{S, "--mem-budget", "1", "check", "--external", frame, "--source", "markov:V=4,order=1,seed=7", "--batch", "16", "--seed", "1"}, []int{exitError}, nil, nil},
		{3, "the tree bench over V = 1e6 with k = 16, depth 8", []string{S, "--mem-budget", "1", "bench", "--algo", "specinfer", "--vocab", "1000000", "--k", "16", "--gamma", "8", "--seconds", "1", "--seed", "1"}, []int{exitUsage}, nil, nil},
		{3, "a spec of inline tables nested 3000 deep", []string{S, "run", nested, "--seed", "1"}, []int{exitUsage}, []string{nested}, nil},
		{3, "a spec with a dotted key of 3000 parts", []string{S, "run", dotted, "--seed", "1"}, []int{exitUsage}, []string{dotted}, nil},
		{3, "a spec whose 100k-value axis repeats its first value last", []string{S, "run", longAxis, "--seed", "1"}, []int{exitUsage}, []string{longAxis}, nil},
		{3, "slurm --submit with an sbatch that prints without end", []string{S, "slurm", "leviathan-table1", "--shards", "2", "--out", filepath.Join(d, "sl"), "--submit", "--sbatch", sbatch, "--seed", "1"}, []int{exitIO}, nil, nil},
	}
	runHostile23(t, d, cases)
}

// bigFrameScript is an external implementation that answers hello, then
// replies to the first batch with a frame declaring 2e7 × 5 int64 (800
// MB) and sends 100 KB of it.
const bigFrameScript = `#!/bin/sh
read -r hello
printf '{"op":"ready","name":"evil"}\n'
read -r batch
hdr="{'descr': '<i8', 'fortran_order': False, 'shape': (20000000, 5), }"
len=$(( ${#hdr} + 1 ))
pad=$(( (64 - (10 + len) % 64) % 64 ))
hl=$(( len + pad ))
printf '{"op":"result","batch":0,"arrays":["emitted"]}\n'
printf '\223NUMPY\001\000'
printf "\\$(printf %03o $((hl % 256)))\\$(printf %03o $((hl / 256)))"
printf '%s%*s\n' "$hdr" $pad ''
head -c 100000 /dev/zero
sleep 5
`

func runHostile23(t *testing.T, dir string, cases []hostile23) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := hashFiles(t, c.inputs)
			r := run(t, dir, c.cmd[0], c.cmd[1:]...)
			if slices.Contains(c.cmd, "validate-log") {
				r.stdout = "" // its problems are its report, on stdout by design
			}
			checkResult(t, c.cmd, r, c.codes, false)
			if after := hashFiles(t, c.inputs); !mapsEqual(before, after) {
				t.Errorf("class %d: %q changed an input", c.class, c.cmd[1:])
			}
			if c.after != nil {
				if msg := c.after(); msg != "" {
					t.Errorf("class %d: %q: %s", c.class, c.cmd[1:], msg)
				}
			}
		})
	}
}

// noNaNOut reports NaN or Inf on r's stdout.
func noNaNOut(r *result) func() string {
	return func() string {
		if strings.Contains(r.stdout, "NaN") || strings.Contains(r.stdout, "Inf") {
			return "NaN or Inf in the output: " + firstLines(r.stdout, 3)
		}
		return ""
	}
}

// TestHostileLoopsAndValues: loops that did not end (issue 23, class 4)
// and values that crashed or gave a verdict the data cannot support
// (class 5), each within caseTimeout and with the documented code.
func TestHostileLoopsAndValues(t *testing.T) {
	t.Parallel() // after the timing-sensitive serial tests (TestInterrupt), beside the others
	d := t.TempDir()
	S, R := bin.simulate, bin.report
	// a generic sweep whose axis holds NaN and ±Inf and whose metric 0,
	// NaN and ±Inf (report build looped for ever on such ranges)
	nan, inf := math.NaN(), math.Inf(1)
	axes := filepath.Join(d, "axes")
	os.MkdirAll(axes, 0o755)
	var rows []table.Row
	for i, x := range []float64{nan, inf, -inf, 1, 2} {
		rows = append(rows, table.Row{{K: "experiment", V: "mysweep"}, {K: "x", V: x}, {K: "m", V: []float64{0, nan, inf, -inf, 0.5}[i]}})
	}
	if err := results.WriteFile(filepath.Join(axes, "mysweep.parquet"), rows, results.Meta{results.KeyKind: "merged", results.KeyExperiment: "mysweep"}); err != nil {
		t.Fatal(err)
	}
	// the main job's smc-steering, block-vs-token and replay tables with
	// every float NaN (and Inf): their figures crashed
	main := filepath.Join(d, "main")
	if r := run(t, d, R, "reproduce", "--out", main, "--scale", "0.01", "--only", "smc-steering", "--only", "block-vs-token", "--only", "replay", "--paper=false"); r.code != 0 {
		t.Fatalf("fixture reproduce: exit %d: %s", r.code, r.stderr)
	}
	for _, v := range []float64{nan, inf} {
		out := filepath.Join(d, fmt.Sprintf("main-%g", v))
		os.MkdirAll(out, 0o755)
		for _, name := range []string{"smc-steering", "block-vs-token", "replay"} {
			tab, err := results.ReadFile(filepath.Join(main, "runs", name, "merged.parquet"))
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
	}
	// a model cache cut in half (it panicked generate)
	cache := filepath.Join(d, "lmcache")
	if r := run(t, d, S, "generate", "--cache", cache, "--target", "prose:V=300,bytes=30000", "--prompts", "1", "--tokens", "10", "--seed", "1"); r.code != 0 {
		t.Fatalf("fixture generate: exit %d: %s", r.code, r.stderr)
	}
	gobs, _ := filepath.Glob(filepath.Join(cache, "*.gob"))
	for _, g := range gobs {
		b, _ := os.ReadFile(g)
		os.WriteFile(g, b[:len(b)/2], 0o644)
	}
	var exact result
	cases := []hostile23{
		{4, "smc fc-bisect with a tolerance below float64's spacing", []string{S, "smc", "--scheme", "fc-bisect", "--bisect-tol", "3e-16", "--seed", "1"}, []int{exitUsage}, nil, nil},
		{4, "smc fc-bisect with a NaN tolerance", []string{S, "smc", "--scheme", "fc-bisect", "--bisect-tol", "nan", "--seed", "1"}, []int{exitUsage}, nil, nil},
		{4, "generate with a target at T = 0.003", []string{S, "generate", "--target", "prose:V=300,bytes=30000,T=0.003", "--cache", "", "--prompts", "1", "--tokens", "30", "--seed", "1"}, []int{exitOK}, nil, nil},
		{4, "report build of a sweep with NaN and ±Inf axis values and metrics", []string{R, "build", axes}, []int{exitOK}, nil, nil},
		{5, "generate with a draft at T = 0.0015", []string{S, "generate", "--target", "prose:V=300,bytes=30000", "--draft", "order=2,T=0.0015", "--cache", "", "--prompts", "1", "--tokens", "30", "--seed", "1"}, []int{exitOK}, nil, nil},
		{5, "generate with its model cache cut in half", []string{S, "generate", "--cache", cache, "--target", "prose:V=300,bytes=30000", "--prompts", "1", "--tokens", "10", "--seed", "1"}, []int{exitOK}, nil, nil},
		{5, "report build of the main job's tables with every float NaN", []string{R, "build", filepath.Join(d, "main-NaN")}, []int{exitOK}, nil, nil},
		{5, "report build of the main job's tables with every float +Inf", []string{R, "build", filepath.Join(d, "main-+Inf")}, []int{exitOK}, nil, nil},
	}
	runHostile23(t, d, cases)
	// exact of mutant-q-mismatch at T = 1e250 printed NaN with exit 0
	cmd := []string{S, "exact", "--algo", "mutant-q-mismatch", "--param", "T=1e250", "--source", "markov:V=4,order=1", "--seed", "1", "--json"}
	exact = run(t, d, cmd[0], cmd[1:]...)
	checkResult(t, cmd, exact, []int{exitOK}, true)
	if msg := noNaNOut(&exact)(); msg != "" {
		t.Errorf("class 5: %s", msg)
	}
}

// TestHostileFullDisk: a write that fails for lack of room (here the
// file-size limit, ulimit -f, whose EFBIG a full disk's ENOSPC shares a
// path with) is an I/O failure, exit 5, for every command that writes;
// it used to be reported as an invalid configuration (exit 2) by
// log-synthetic. No temporary file is left behind.
func TestHostileFullDisk(t *testing.T) {
	f := makeFixtures(t)
	d := t.TempDir()
	S, R := bin.simulate, bin.report
	// a JSON-lines log of 2000 valid steps for import-log
	var jl strings.Builder
	for i := range 2000 {
		b, _ := json.Marshal(data.LogRow{SchemaVersion: int32(data.SchemaVersion), RunID: "r", Step: int64(i), Gamma: 1, VocabSize: 2,
			DraftTokens: []int32{0}, Emitted: []int32{0}, RowKind: "probs", Layout: "dense", Temperature: 1, TopP: 1,
			Q: []float32{0.5, 0.5}, P: []float32{0.5, 0.5, 0.5, 0.5}})
		jl.Write(append(b, '\n'))
	}
	jsonl := filepath.Join(d, "steps.jsonl")
	os.WriteFile(jsonl, []byte(jl.String()), 0o644)
	out := func(name string) string { return filepath.Join(d, "out", name) }
	os.MkdirAll(out(""), 0o755)
	lm := filepath.Join(d, "lm")
	for _, c := range []struct {
		name string
		cmd  []string
	}{
		{"log-synthetic", []string{S, "log-synthetic", "--source", "dirichlet:V=200", "--steps", "300", "--seed", "1", "--out", out("a.parquet")}},
		{"import-log", []string{S, "import-log", "--in", jsonl, "--out", out("b.parquet")}},
		{"replay --steps-out", []string{S, "replay", "--log", f.log, "--steps-out", out("steps.csv"), "--seed", "1"}},
		{"run --out", []string{S, "run", "leviathan-table1", "--out", out("sweep"), "--seed", "1"}},
		{"generate --cache", []string{S, "generate", "--cache", lm, "--target", "prose:V=300,bytes=30000", "--prompts", "1", "--tokens", "10", "--seed", "1"}},
		{"report merge", []string{R, "merge", f.sweep, "--out", out("m.parquet")}},
		{"report build", []string{R, "build", f.sweep, "--out", out("build")}},
		{"report paper", []string{R, "paper", f.sweep, "--out", out("paper")}},
		{"report reproduce", []string{R, "reproduce", "--out", out("repro"), "--only", "leviathan-table1", "--scale", "0.1", "--paper=false"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := append([]string{"/bin/sh", "-c", `ulimit -f 1 && exec "$0" "$@"`}, c.cmd...)
			r := run(t, d, cmd[0], cmd[1:]...)
			lines := nonEmptyLines(r.stderr)
			if r.code != exitIO || len(lines) == 0 || !strings.Contains(lines[len(lines)-1], "too large") {
				t.Errorf("%q: exit %d, want %d with the write's error last; stderr: %s", c.cmd[1:], r.code, exitIO, firstLines(r.stderr, 4))
			}
			if strings.Contains(r.stderr, "panic:") {
				t.Errorf("%q: a panic", c.cmd[1:])
			}
			filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
				if err == nil && strings.Contains(info.Name(), ".tmp-") {
					t.Errorf("%q left %s", c.cmd[1:], p)
				}
				return nil
			})
		})
	}
}

// TestGlobalFlagFirst: a global flag before the command no longer stops
// the command reading its own flags after a positional argument (issue
// 23: '--mem-budget 1 replay LOG --algo block' replayed the default
// rules).
func TestGlobalFlagFirst(t *testing.T) {
	f := makeFixtures(t)
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{bin.simulate, "--mem-budget", "1", "replay", f.log, "--algo", "block", "--json", "--seed", "1"}, `"algorithm": "block"`},
		{[]string{bin.simulate, "--mem-budget=2", "validate-log", f.log, "--json"}, `"valid": true`},
		{[]string{bin.report, "--mem-budget", "1", "export", f.merged, "--format", "json"}, `"columns"`},
	} {
		r := run(t, f.dir, c.cmd[0], c.cmd[1:]...)
		checkResult(t, c.cmd, r, []int{exitOK}, false)
		if !strings.Contains(r.stdout, c.want) {
			t.Errorf("%q: stdout lacks %s: the flags after the argument were not read: %s", c.cmd[1:], c.want, firstLines(r.stdout, 3))
		}
		if c.cmd[3] == "replay" && strings.Contains(r.stdout, `"algorithm": "token"`) {
			t.Errorf("%q replayed the default rules", c.cmd[1:])
		}
	}
}
