package clitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Exit codes of internal/cliutil (duplicated here on purpose: scripts see
// numbers, and this test pins them).
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitViolated    = 3
	exitInterrupted = 4
	exitIO          = 5
)

// caseTimeout bounds one hostile command: each should fail at once or
// finish a small job; a command still running after this is reported.
const caseTimeout = 20 * time.Second

// maxRSS is the peak resident memory any hostile command may reach
// (issue 12: no run above 1 GB unless the user raised the budget).
const maxRSS = 1 << 30

var bin struct{ simulate, report string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "specsim-clitest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin.simulate = filepath.Join(dir, "simulate")
	bin.report = filepath.Join(dir, "report")
	for out, pkg := range map[string]string{bin.simulate: "../../cmd/simulate", bin.report: "../../cmd/report"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", pkg, ":", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one finished command.
type result struct {
	code           int
	stdout, stderr string
	rss            int64 // peak resident set, bytes
	wall           time.Duration
}

func run(t *testing.T, dir string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String(), wall: time.Since(start)}
	if ctx.Err() != nil {
		t.Errorf("%s %q: still running after %v; killed", filepath.Base(name), args, caseTimeout)
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else {
			t.Fatalf("%s %v: %v", name, args, err)
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = int64(ru.Maxrss) * 1024 // Linux reports KiB
	}
	return r
}

func hashFiles(t *testing.T, paths []string) map[string][32]byte {
	t.Helper()
	h := map[string][32]byte{}
	for _, p := range paths {
		filepath.Walk(p, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() && info.Name() != ".lock" {
				b, _ := os.ReadFile(path)
				h[path] = sha256.Sum256(b)
			}
			return nil
		})
	}
	return h
}

// fixtures writes the files the hostile cases read: a valid step log, a
// truncated copy, a sweep directory with merged results, and JSON lines
// with a bad fourth row. It returns their paths.
type fixtures struct {
	dir, log, truncated, sweep, merged, jsonl, badJSONL, existingLog string
}

func makeFixtures(t *testing.T) fixtures {
	t.Helper()
	d := t.TempDir()
	f := fixtures{dir: d, log: filepath.Join(d, "log.parquet"), truncated: filepath.Join(d, "trunc.parquet"),
		sweep: filepath.Join(d, "sweep"), merged: filepath.Join(d, "sweep", "merged.parquet"),
		jsonl: filepath.Join(d, "rows.jsonl"), badJSONL: filepath.Join(d, "bad.jsonl"), existingLog: filepath.Join(d, "existing.parquet")}
	mustRun := func(name string, args ...string) {
		if r := run(t, d, name, args...); r.code != 0 {
			t.Fatalf("fixture %s %v: exit %d: %s", filepath.Base(name), args, r.code, r.stderr)
		}
	}
	mustRun(bin.simulate, "log-synthetic", "--source", "markov:V=4,order=1,seed=7", "--steps", "40", "--gamma", "3", "--seed", "1", "--out", f.log)
	mustRun(bin.simulate, "log-synthetic", "--source", "markov:V=4,order=1,seed=8", "--steps", "10", "--gamma", "3", "--seed", "1", "--out", f.existingLog)
	b, err := os.ReadFile(f.log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.truncated, b[:len(b)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(bin.simulate, "run", "leviathan-table1", "--seed", "1", "--out", f.sweep)
	mustRun(bin.report, "merge", f.sweep)
	// JSON lines: four rows in the log schema, the fourth with a negative
	// probability. The rows come from the valid log via replay's export.
	row := func(step int, p0 string) string {
		return fmt.Sprintf(`{"run_id":"r","step":%d,"gamma":1,"vocab_size":2,"draft_tokens":[0],"p":[[%s,0.5],[0.5,0.5]],"q":[[0.5,0.5]]}`, step, p0)
	}
	good := strings.Join([]string{row(0, "0.5"), row(1, "0.5"), row(2, "0.5"), row(3, "0.5")}, "\n") + "\n"
	bad := strings.Join([]string{row(0, "0.5"), row(1, "0.5"), row(2, "0.5"), row(3, "-0.5")}, "\n") + "\n"
	os.WriteFile(f.jsonl, []byte(good), 0o644)
	os.WriteFile(f.badJSONL, []byte(bad), 0o644)
	return f
}

// TestHostile runs each hostile command line and checks the contract of
// issue 12: its exit code is one of the listed ones, a failure prints one
// line on stderr and nothing that looks like a panic, no input changes,
// and peak memory stays under maxRSS.
func TestHostile(t *testing.T) {
	t.Parallel() // after the timing-sensitive serial tests (TestInterrupt), beside the others
	f := makeFixtures(t)
	mergedFile := f.merged
	cellFile := firstFile(t, filepath.Join(f.sweep, "cells"))
	sweepSpec := filepath.Join(f.dir, "badaxis.toml")
	os.WriteFile(sweepSpec, []byte("experiment = \"verify\"\n[grid]\nvocab = [4, -3]\n"), 0o644)
	S, R := bin.simulate, bin.report
	cases := []struct {
		name   string
		cmd    []string
		codes  []int    // allowed exit codes
		inputs []string // files or directories that must not change
		noNaN  bool     // on success, stdout has no NaN or Inf
	}{
		{"exact on a Markov pair with underflowing rows", []string{S, "exact", "--source", "markov:V=4,order=1,a=0.01,seed=13", "--seed", "1", "--json"}, []int{exitOK}, nil, true},
		{"exact on a Markov pair with a = 1e-6", []string{S, "exact", "--source", "markov:V=4,order=1,a=1e-6,seed=13", "--seed", "1", "--json"}, []int{exitOK, exitUsage}, nil, true},
		{"check on a Zipf pool whose draft underflows", []string{S, "check", "--source", "zipf:V=64,s=1e-3", "--trials", "2000", "--seed", "1", "--json"}, []int{exitOK, exitUsage}, nil, true},
		{"check with 9e18 trials", []string{S, "check", "--trials", "9000000000000000000", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"scenario with 9e18 trials", []string{S, "scenario", "--trials", "9000000000000000000", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"audit at scale 1e12", []string{S, "audit", "--scale", "1e12", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"run at scale 5e14", []string{S, "run", "leviathan-tokens", "--scale", "5e14", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"check at level 0", []string{S, "check", "--level", "0", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"check at power 0", []string{S, "check", "--power", "0", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"an unknown flag with --json", []string{S, "check", "--bogus", "--json"}, []int{exitUsage}, nil, false},
		{"a Markov concentration beyond its limit", []string{S, "exact", "--source", "markov:V=4,a=1e10", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"validate-log with --max-problems 0 on a truncated log", []string{S, "validate-log", f.truncated, "--max-problems", "0"}, []int{exitUsage, exitIO}, []string{f.truncated}, false},
		{"replay writing its steps over its log", []string{S, "replay", "--log", f.log, "--steps-out", f.log, "--seed", "1"}, []int{exitUsage}, []string{f.log}, false},
		{"import-log writing over its input", []string{S, "import-log", "--in", f.jsonl, "--out", f.jsonl}, []int{exitUsage}, []string{f.jsonl}, false},
		{"import-log with a bad fourth row over an existing log", []string{S, "import-log", "--in", f.badJSONL, "--out", f.existingLog}, []int{exitUsage}, []string{f.badJSONL, f.existingLog}, false},
		{"report export writing over its input", []string{R, "export", mergedFile, "--out", mergedFile}, []int{exitUsage}, []string{f.sweep}, false},
		{"report merge writing over a cell", []string{R, "merge", f.sweep, "--out", cellFile}, []int{exitUsage}, []string{f.sweep}, false},
		{"slurm with a newline in the partition", []string{S, "slurm", "leviathan-table1", "--shards", "2", "--out", filepath.Join(f.dir, "slurm"), "--partition", "gpu\n#SBATCH --evil", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"a sweep spec with a bad vocab axis", []string{S, "run", sweepSpec, "--seed", "1"}, []int{exitUsage}, []string{sweepSpec}, false},
		{"a tree enumeration too large to finish", []string{S, "exact", "--algo", "rrs-wor", "--k", "3", "--branch", "3,2,1,1,1,1", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"a tree enumeration of 1e19 trees on a model pair", []string{S, "exact", "--algo", "rrs-wor", "--k", "3", "--branch", "3,2,1,1,1,1", "--source", "markov:V=4,order=1,seed=7", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"a tree enumeration of 1e19 trees on --p/--q", []string{S, "exact", "--algo", "rrs-wor", "--k", "3", "--branch", "3,2,1,1,1,1", "--p", "0.25,0.25,0.25,0.25", "--q", "0.4,0.3,0.2,0.1", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"check with 9e13 trials", []string{S, "check", "--trials", "90000000000000", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"scenario fms-example with 9e18 trials", []string{S, "scenario", "fms-example", "--trials", "9000000000000000000", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"scenario fms-example with 9e13 trials", []string{S, "scenario", "fms-example", "--trials", "90000000000000", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"run at scale 1e7", []string{S, "run", "leviathan-tokens", "--scale", "1e7", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"slurm at scale 1e12", []string{S, "slurm", "leviathan-table1", "--shards", "2", "--out", filepath.Join(f.dir, "slurm-scale"), "--scale", "1e12", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"run at scale NaN", []string{S, "run", "leviathan-tokens", "--scale", "NaN", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"report reproduce at scale 1e12", []string{R, "reproduce", "--scale", "1e12", "--out", filepath.Join(f.dir, "repro")}, []int{exitUsage}, nil, false},
		{"bench with 3000 workers", []string{S, "bench", "--workers", "3000", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"a malformed flag value with --json", []string{S, "exact", "--gamma", "two", "--json"}, []int{exitUsage}, nil, false},
		{"a missing required flag", []string{S, "replay", "--json"}, []int{exitUsage}, nil, false},
		{"an unknown command", []string{S, "simulat", "--json"}, []int{exitUsage}, nil, false},
		{"report: an unknown flag", []string{R, "merge", f.sweep, "--bogus"}, []int{exitUsage}, []string{f.sweep}, false},
		{"report: an unknown command", []string{R, "mergee", f.sweep}, []int{exitUsage}, []string{f.sweep}, false},
		{"smc on a bad model spec", []string{S, "smc", "--source", "markov:V=0", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"smc with N = 0 particles", []string{S, "smc", "--n", "0", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"smc with K = 0", []string{S, "smc", "--k", "0", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"smc with 9e18 runs", []string{S, "smc", "--runs", "9000000000000000000", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"smc with an unknown scheme", []string{S, "smc", "--scheme", "bogus", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"generate on an unknown corpus", []string{S, "generate", "--target", "bogus", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"generate with no prompts", []string{S, "generate", "--prompts", "0", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"generate with negative tokens", []string{S, "generate", "--tokens", "-5", "--seed", "1"}, []int{exitUsage}, nil, false},
		{"check --external with a missing executable", []string{S, "check", "--external", filepath.Join(f.dir, "no-such-python"), "--seed", "1"}, []int{exitUsage}, nil, false},
		{"check --external with an input as the program", []string{S, "check", "--external", f.jsonl, "--seed", "1"}, []int{exitUsage}, []string{f.jsonl}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := hashFiles(t, c.inputs)
			r := run(t, f.dir, c.cmd[0], c.cmd[1:]...)
			checkResult(t, c.cmd, r, c.codes, c.noNaN)
			if after := hashFiles(t, c.inputs); !mapsEqual(before, after) {
				t.Errorf("%v changed an input: before %d files, after %d", c.cmd[1:], len(before), len(after))
			}
		})
	}
}

// TestHostileMarkovSeeds: Markov sources with small concentrations used
// to panic or give NaN for some seeds; every seed must now give finite
// numbers or one clear line.
func TestHostileMarkovSeeds(t *testing.T) {
	dir := t.TempDir()
	for seed := 1; seed <= 20; seed++ {
		cmd := []string{bin.simulate, "exact", "--source", fmt.Sprintf("markov:V=4,order=1,a=0.01,seed=%d", seed), "--seed", "1", "--json"}
		r := run(t, dir, cmd[0], cmd[1:]...)
		checkResult(t, cmd, r, []int{exitOK}, true)
	}
}

func checkResult(t *testing.T, cmd []string, r result, codes []int, noNaN bool) {
	t.Helper()
	ok := false
	for _, c := range codes {
		ok = ok || r.code == c
	}
	if !ok {
		t.Errorf("%q: exit %d, want one of %v; stderr: %s", cmd[1:], r.code, codes, firstLines(r.stderr, 3))
	}
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
			t.Errorf("%q: output holds a panic or stack trace: %s", cmd[1:], firstLines(s, 5))
		}
	}
	if r.code != exitOK {
		if n := len(nonEmptyLines(r.stderr)); n != 1 {
			t.Errorf("%q: exit %d with %d lines on stderr, want one: %s", cmd[1:], r.code, n, firstLines(r.stderr, 5))
		}
		if r.code == exitUsage && strings.TrimSpace(r.stdout) != "" {
			t.Errorf("%q: a usage error printed to stdout: %s", cmd[1:], firstLines(r.stdout, 3))
		}
	} else if noNaN {
		if strings.Contains(r.stdout, "NaN") || strings.Contains(r.stdout, "Inf") {
			t.Errorf("%q: exit 0 with NaN or Inf in the output: %s", cmd[1:], firstLines(r.stdout, 5))
		}
		if strings.HasPrefix(strings.TrimSpace(r.stdout), "{") && !json.Valid([]byte(r.stdout)) {
			t.Errorf("%q: --json output is not valid JSON", cmd[1:])
		}
	}
	if r.rss > maxRSS {
		t.Errorf("%q: peak RSS %d MiB exceeds %d MiB", cmd[1:], r.rss>>20, maxRSS>>20)
	}
}

func firstFile(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		t.Fatalf("no file in %s: %v", dir, err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".parquet") {
			return filepath.Join(dir, e.Name())
		}
	}
	t.Fatalf("no parquet file in %s", dir)
	return ""
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func firstLines(s string, n int) string {
	l := nonEmptyLines(s)
	if len(l) > n {
		l = append(l[:n], "…")
	}
	return strings.Join(l, " | ")
}

func mapsEqual(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
