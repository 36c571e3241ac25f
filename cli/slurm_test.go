package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specsim/specsim/experiments/sweep"
	"github.com/specsim/specsim/internal/diag"

	"github.com/specsim/specsim/data/results"
)

// buildBinaries builds simulate and report into dir (the Slurm jobs and
// the signal test run the real binaries).
func buildBinaries(t *testing.T, dir string) (simulate, report string) {
	t.Helper()
	root := repoRoot(t)
	for _, name := range []string{"simulate", "report"} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, out)
		}
	}
	return filepath.Join(dir, "simulate"), filepath.Join(dir, "report")
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	return filepath.Dir(wd) // cli -> repository root
}

// runBin runs a binary with a timeout and returns stdout, stderr and the
// exit code.
func runBin(t *testing.T, env []string, timeout time.Duration, name string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out after %s\nstderr: %s", name, strings.Join(args, " "), timeout, se.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return so.String(), se.String(), code
}

// oneProcessMerged runs small.toml in one process and merges it: the
// reference table every other way of running must reproduce byte for byte.
func oneProcessMerged(t *testing.T, sim, rep, dir string) (results.Table, []byte) {
	t.Helper()
	if _, se, code := runBin(t, nil, time.Minute, sim, "run", "experiments/specs/small.toml", "--out", dir, "--workers", "1", "--shard", "0/1"); code != 0 {
		t.Fatalf("one-process run: exit %d: %s", code, se)
	}
	out := filepath.Join(dir, "merged.parquet")
	if _, se, code := runBin(t, nil, time.Minute, rep, "merge", dir, "--out", out); code != 0 {
		t.Fatalf("report merge: exit %d: %s", code, se)
	}
	return readMerged(t, out)
}

func readMerged(t *testing.T, path string) (results.Table, []byte) {
	t.Helper()
	tab, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tab, b
}

// SIGINT stops a sweep cleanly (exit 4, whole cell files only) and the same
// command resumes it to the one-process result.
func TestRunSIGINTResume(t *testing.T) {
	bin := t.TempDir()
	sim, rep := buildBinaries(t, bin)
	_, refBytes := oneProcessMerged(t, sim, rep, filepath.Join(t.TempDir(), "ref"))

	dir := filepath.Join(t.TempDir(), "killed")
	// A slowed-down copy of the spec: each cell takes long enough that the
	// signal arrives mid-sweep (scale multiplies trials; the spec hash
	// includes it, so the reference is the same scaled spec).
	args := []string{"run", "experiments/specs/small.toml", "--out", dir, "--workers", "2", "--scale", "8", "--progress-every", "0s"}
	cmd := exec.Command(sim, args...)
	cmd.Dir = repoRoot(t)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the first finished cell, then interrupt.
	buf := make([]byte, 4096)
	var log strings.Builder
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(log.String(), "cells (") && time.Now().Before(deadline) {
		n, err := stderr.Read(buf)
		log.Write(buf[:n])
		if err != nil {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	rest := new(bytes.Buffer)
	rest.ReadFrom(stderr)
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	files, _ := filepath.Glob(filepath.Join(dir, "cells", "*.parquet"))
	if code == 0 && len(files) == 18 {
		t.Skip("the sweep finished before the signal arrived (machine too fast); nothing to resume")
	}
	if code != diag.ExitInterrupted {
		t.Fatalf("interrupted run exited %d, want %d\n%s%s", code, diag.ExitInterrupted, log.String(), rest.String())
	}
	if !strings.Contains(rest.String(), "interrupted") {
		t.Errorf("stderr does not say interrupted: %s", rest.String())
	}
	temps, _ := filepath.Glob(filepath.Join(dir, "cells", ".*"))
	if len(temps) != 0 {
		t.Errorf("half-written files left: %v", temps)
	}
	if len(files) == 0 || len(files) >= 18 {
		t.Fatalf("%d cell files after the interrupt; want some but not all", len(files))
	}
	_, se, code := runBin(t, nil, time.Minute, sim, args...)
	if code != 0 || !strings.Contains(se, fmt.Sprintf("%d already stored", len(files))) {
		t.Fatalf("resume: exit %d\n%s", code, se)
	}
	out := filepath.Join(dir, "merged.parquet")
	if _, se, code := runBin(t, nil, time.Minute, rep, "merge", dir, "--out", out); code != 0 {
		t.Fatalf("merge after resume: %d %s", code, se)
	}
	// The reference is unscaled; compare against a scaled one-process run.
	ref8 := filepath.Join(t.TempDir(), "ref8")
	if _, se, code := runBin(t, nil, time.Minute, sim, "run", "experiments/specs/small.toml", "--out", ref8, "--scale", "8", "--workers", "1"); code != 0 {
		t.Fatal(se)
	}
	runBin(t, nil, time.Minute, rep, "merge", ref8)
	_, a := readMerged(t, out)
	_, b := readMerged(t, filepath.Join(ref8, "merged.parquet"))
	if !bytes.Equal(a, b) {
		t.Fatal("interrupted-and-resumed merge differs from the one-process run")
	}
	if bytes.Equal(a, refBytes) {
		t.Fatal("scale 8 gave the same table as scale 1: the scale is not applied")
	}
}

// TestSlurmIntegration starts a real single-node Slurm cluster on loopback
// (scripts/slurm/single-node.sh, no systemd), submits small.toml as a
// 3-task job array plus the merge job with 'simulate slurm --submit',
// waits, and checks the merged table equals the one-process run byte for
// byte. It installs slurm-wlm and munge with apt-get when they are
// missing and starts system daemons, which needs root, so it is opt-in:
// it runs only with SPECSIM_SLURM=1 (.ci/run sets it) and skips where it
// cannot run.
func TestSlurmIntegration(t *testing.T) {
	if os.Getenv("SPECSIM_SLURM") != "1" {
		t.Skip("the Slurm test installs slurm-wlm and munge and starts their daemons; set SPECSIM_SLURM=1 to run it (as root, on Linux)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the Slurm test runs on Linux only")
	}
	if os.Geteuid() != 0 {
		t.Skip("the Slurm test starts munged, slurmctld and slurmd, which needs root; run it as root (it is skipped otherwise)")
	}
	script := filepath.Join(repoRoot(t), "scripts", "slurm", "single-node.sh")
	_, errSlurm := exec.LookPath("slurmctld")
	_, errMunge := exec.LookPath("munged")
	if errSlurm != nil || errMunge != nil {
		if _, err := exec.LookPath("apt-get"); err != nil {
			t.Skip("slurm-wlm/munge are not installed and there is no apt-get to install them")
		}
		t.Log("installing slurm-wlm and munge with apt-get")
		if _, se, code := runBin(t, nil, 10*time.Minute, "bash", script, "install"); code != 0 {
			t.Fatalf("installing slurm-wlm munge: exit %d\n%s", code, se)
		}
	} else if _, se, code := runBin(t, nil, time.Minute, "bash", script, "install"); code != 0 { // munge key
		t.Fatalf("%s install: %s", script, se)
	}
	start := time.Now()
	base, err := os.MkdirTemp("", "specsim-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755) // slurmctld runs as the slurm user
	env := []string{"SLURM_BASE=" + filepath.Join(base, "cluster"), "SLURM_CONF=" + filepath.Join(base, "cluster", "slurm.conf"),
		"SLURM_CTLD_PORT=16817", "SLURM_D_PORT=16818"}
	t.Cleanup(func() {
		runBin(t, env, time.Minute, "bash", script, "down")
		os.RemoveAll(base)
	})
	if _, se, code := runBin(t, env, time.Minute, "bash", script, "up"); code != 0 {
		t.Fatalf("starting the cluster: exit %d\n%s", code, se)
	}
	t.Logf("cluster up in %s", time.Since(start).Round(time.Millisecond))

	bin := filepath.Join(base, "bin")
	os.Mkdir(bin, 0o755)
	sim, rep := buildBinaries(t, bin)
	ref, refBytes := oneProcessMerged(t, sim, rep, filepath.Join(base, "ref"))

	t0 := time.Now()
	out := filepath.Join(base, "sweep")
	so, se, code := runBin(t, env, time.Minute, sim, "slurm", "experiments/specs/small.toml", "--shards", "3", "--out", out,
		"--time", "00:05:00", "--submit", "--json")
	if code != 0 {
		t.Fatalf("simulate slurm --submit: exit %d\n%s", code, se)
	}
	var sub sweep.SlurmResult
	if err := json.Unmarshal([]byte(so), &sub); err != nil || sub.ArrayJobID == "" || sub.MergeJobID == "" {
		t.Fatalf("simulate slurm --submit --json: %v\n%s", err, so)
	}
	// Wait until neither job is queued or running.
	deadline := time.Now().Add(90 * time.Second)
	for {
		q, _, _ := runBin(t, env, 10*time.Second, "squeue", "-h", "-j", sub.ArrayJobID+","+sub.MergeJobID, "-o", "%i %T %r")
		if strings.TrimSpace(q) == "" {
			break
		}
		if strings.Contains(q, "DependencyNeverSatisfied") {
			logs, _ := filepath.Glob(filepath.Join(out, "slurm", "*.out"))
			t.Fatalf("the merge job will never run (an array task failed): %s\nlogs: %v", q, logs)
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still queued after 90 s:\n%s", q)
		}
		time.Sleep(200 * time.Millisecond)
	}
	merged := filepath.Join(out, "merged.parquet")
	if _, err := os.Stat(merged); err != nil {
		var logs strings.Builder
		paths, _ := filepath.Glob(filepath.Join(out, "slurm", "*.out"))
		for _, p := range paths {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(&logs, "== %s\n%s", p, b)
		}
		t.Fatalf("no merged table after the jobs ended: %v\n%s", err, logs.String())
	}
	t.Logf("array %s + merge %s finished in %s (cluster start to merged: %s)", sub.ArrayJobID, sub.MergeJobID,
		time.Since(t0).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	// Every task ran its own shard.
	for i := range 3 {
		p := filepath.Join(out, "cells", fmt.Sprintf("cell-%06d.parquet", i))
		tab, err := results.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := tab.Meta[results.KeyShard]; got != fmt.Sprintf("%d/3", i) {
			t.Errorf("%s was computed by shard %s, want %d/3", p, got, i)
		}
	}
	tab, b := readMerged(t, merged)
	if err := results.SameRows(ref.Rows, tab.Rows); err != nil {
		t.Fatalf("Slurm merge differs from the one-process run: %v", err)
	}
	if !bytes.Equal(b, refBytes) {
		t.Fatal("Slurm merged parquet is not byte-identical to the one-process merge")
	}
	slurmShardedCheck(t, env, sim, base)
}

// slurmShardedCheck submits the dirichlet V=200 check as 4 shards with
// 'simulate slurm --check --submit', waits for the array and the merge,
// and compares the merge job's verdict line and every test's line with
// the one-process check's text (issue 31).
func slurmShardedCheck(t *testing.T, env []string, sim, base string) {
	check := []string{"--algo", "token", "--source", "dirichlet:V=200,a=0.3,beta=0.7", "--gamma", "3", "--trials", "200000"}
	one, se, code := runBin(t, nil, time.Minute, sim, append(append([]string{"check"}, check...), "--seed", "5")...)
	if code != 0 {
		t.Fatalf("one-process check: exit %d: %s", code, se)
	}
	out := filepath.Join(base, "check")
	so, se, code := runBin(t, env, time.Minute, sim, append([]string{"slurm", "--check", "--shards", "4", "--out", out, "--time", "00:05:00", "--seed", "5", "--submit", "--json", "--"}, check...)...)
	var sub slurmCheckJSON
	if err := json.Unmarshal([]byte(so), &sub); code != 0 || err != nil || sub.MergeJobID == "" {
		t.Fatalf("simulate slurm --check --submit: exit %d %v\n%s%s", code, err, so, se)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		q, _, _ := runBin(t, env, 10*time.Second, "squeue", "-h", "-j", sub.ArrayJobID+","+sub.MergeJobID, "-o", "%i %T %r")
		if strings.TrimSpace(q) == "" {
			break
		}
		if strings.Contains(q, "DependencyNeverSatisfied") || time.Now().After(deadline) {
			t.Fatalf("the sharded check's jobs did not finish: %s", q)
		}
		time.Sleep(200 * time.Millisecond)
	}
	logs, _ := filepath.Glob(filepath.Join(out, "slurm", "check-merge-*.out"))
	if len(logs) != 1 {
		t.Fatalf("merge logs %v", logs)
	}
	merged, _ := os.ReadFile(logs[0])
	keep := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			// the next step's time estimate is a timing, which a merge
			// takes from its shards' runs
			timing := strings.Contains(l, "on this machine")
			if (strings.HasPrefix(l, "verdict:") || strings.HasPrefix(l, "  ")) && !timing {
				out = append(out, l)
			}
		}
		return out
	}
	a, b := keep(one), keep(string(merged))
	if len(a) < 10 || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("the Slurm merge's verdict and tests differ from one process:\n%s\n---\n%s", strings.Join(a, "\n"), merged)
	}
}
