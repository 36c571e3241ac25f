package clitest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// timingKeys are the fields of a check's JSON that measure this run's
// time (and the next steps, whose reasons quote it): a merge and the
// one-process check agree on everything else.
var timingKeys = []string{"elapsed_seconds", "cpu_seconds", "min_detectable_tv_at_one_cpu_second", "next"}

// checkJSON decodes a check's JSON, with the timing fields removed.
func checkJSON(t *testing.T, what string, r result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("%s: exit %d, stdout is not JSON: %v\n%s\n%s", what, r.code, err, r.stdout, r.stderr)
	}
	for _, k := range timingKeys {
		delete(m, k)
	}
	return m
}

// sameCheck fails unless a and b agree field by field.
func sameCheck(t *testing.T, what string, a, b map[string]any) {
	t.Helper()
	for k, v := range a {
		if !reflect.DeepEqual(v, b[k]) {
			t.Errorf("%s: field %s differs:\none process %v\nmerged      %v", what, k, v, b[k])
		}
	}
	if len(a) != len(b) {
		t.Errorf("%s: %d fields against %d", what, len(a), len(b))
	}
}

// shards runs the n shards of the check args into dir and returns their
// state files.
func shards(t *testing.T, dir, tag string, n int, args ...string) []string {
	t.Helper()
	var files []string
	for i := range n {
		f := filepath.Join(dir, tag+"-"+itoa(i)+".state")
		r := run(t, dir, bin.simulate, append(append([]string{"check"}, args...), "--shard", itoa(i)+"/"+itoa(n), "--state-out", f)...)
		if r.code != 0 {
			t.Fatalf("shard %d/%d of %v: exit %d: %s", i, n, args, r.code, r.stderr)
		}
		files = append(files, f)
	}
	return files
}

// TestShardedCheck is issue 31's "done when": four shards of the dirichlet
// V=200 check merged give the one-process JSON field by field (verdict,
// p-value, every test's statistic and p; timings aside) and exit code; a
// planted bug merged is violated as in one process; three of four shards,
// a shard twice, shards of two seeds, a damaged file and a flag that
// contradicts the files are each refused with exit 2 and one line naming
// the reason; no state file is changed by a merge.
func TestShardedCheck(t *testing.T) {
	t.Parallel() // after the timing-sensitive serial tests (TestInterrupt), beside the others
	dir := t.TempDir()
	base := []string{"--source", "dirichlet:V=200,a=0.3,beta=0.7", "--gamma", "3", "--trials", "200000", "--seed", "5"}
	for _, algo := range []string{"token", "mutant-resample-p"} {
		args := append([]string{"--algo", algo}, base...)
		one := run(t, dir, bin.simulate, append(append([]string{"check"}, args...), "--json")...)
		files := shards(t, dir, algo, 4, args...)
		before := hashFiles(t, files)
		order := []string{files[2], files[0], files[3], files[1]}
		merged := run(t, dir, bin.simulate, append([]string{"check", "--merge", "--json"}, order...)...)
		if merged.code != one.code {
			t.Errorf("%s: merge exit %d, one process %d: %s", algo, merged.code, one.code, merged.stderr)
		}
		a, b := checkJSON(t, algo+" one process", one), checkJSON(t, algo+" merged", merged)
		sameCheck(t, algo, a, b)
		if want := map[string]string{"token": "not_detected", "mutant-resample-p": "violated"}[algo]; b["verdict"] != want {
			t.Errorf("%s merged: verdict %v, want %s", algo, b["verdict"], want)
		}
		if !mapsEqual(before, hashFiles(t, files)) {
			t.Errorf("%s: the merge changed a state file", algo)
		}
	}
	good := shards(t, dir, "token", 4, append([]string{"--algo", "token"}, base...)...)
	seed6 := shards(t, dir, "seed6", 4, "--algo", "token", "--source", "dirichlet:V=200,a=0.3,beta=0.7", "--gamma", "3", "--trials", "200000", "--seed", "6")
	damaged := filepath.Join(dir, "damaged.state")
	b, _ := os.ReadFile(good[3])
	b[len(b)/2] ^= 0x10
	os.WriteFile(damaged, b, 0o644)
	refused := []struct {
		why  string
		args []string
	}{
		{"shard(s) 3 of 4 missing", good[:3]},
		{"shard 1 of 4 is given twice", append(append([]string{}, good...), good[1])},
		{"seed 5 against 6", []string{good[0], good[1], seed6[2], seed6[3]}},
		{"checksum does not match", []string{good[0], good[1], good[2], damaged}},
		{"--gamma 4 contradicts the shards' --gamma 3", append([]string{"--gamma", "4"}, good...)},
	}
	for _, c := range refused {
		before := hashFiles(t, c.args)
		r := run(t, dir, bin.simulate, append([]string{"check", "--merge"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.why) || len(nonEmptyLines(r.stderr)) != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line saying so", c.why, r.code, r.stderr)
		}
		if !mapsEqual(before, hashFiles(t, c.args)) {
			t.Errorf("%s: a refused merge changed its input", c.why)
		}
	}
}

// TestShardResume: SIGINT stops a shard with exit 4 and its finished
// trials in its state file; the same command continues it, and the
// finished shard merges to the one-process check's JSON.
func TestShardResume(t *testing.T) {
	t.Parallel() // after the timing-sensitive serial tests (TestInterrupt), beside the others
	dir := t.TempDir()
	args := []string{"check", "--algo", "token", "--source", "dirichlet:V=200,a=0.3,beta=0.7", "--gamma", "3", "--trials", "1000000", "--seed", "5"}
	state := filepath.Join(dir, "s.state")
	cmd := exec.Command(bin.simulate, append(args, "--shard", "0/1", "--state-out", state)...)
	cmd.Dir = dir
	var se strings.Builder
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(800 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code == 0 {
		t.Skip("the shard finished before the signal (machine too fast); nothing to resume")
	}
	if code != 4 || !strings.Contains(se.String(), "rerun the same command to continue") {
		t.Fatalf("SIGTERM: exit %d, want 4: %s", code, se.String())
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("no state written on SIGTERM: %v", err)
	}
	r := run(t, dir, bin.simulate, append(args, "--shard", "0/1", "--state-out", state, "--json")...)
	var sh struct {
		Done, Want int64
		Finished   bool
	}
	json.Unmarshal([]byte(strings.NewReplacer(`"trials_done"`, `"Done"`, `"trials_wanted"`, `"Want"`).Replace(r.stdout)), &sh)
	if r.code != 0 || !sh.Finished || sh.Done != 1000000 {
		t.Fatalf("resume: exit %d %+v: %s %s", r.code, sh, r.stdout, r.stderr)
	}
	one := run(t, dir, bin.simulate, append(args, "--json")...)
	merged := run(t, dir, bin.simulate, "check", "--merge", "--json", state)
	sameCheck(t, "resumed", checkJSON(t, "one process", one), checkJSON(t, "resumed and merged", merged))
}

// TestShardedExternal: an external check (the NumPy verifier) run as two
// shards, each with its own implementation process, merges to the
// one-process report field by field (timings aside: also its
// steps_per_second); shards of two implementations are refused with
// exit 2. It needs /usr/bin/python3 with NumPy and skips without.
func TestShardedExternal(t *testing.T) {
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil || exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("no /usr/bin/python3 with NumPy: the external shards are not run")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	t.Setenv("PYTHONPATH", filepath.Join(root, "python"))
	ext := func(fn string) string { return py + " -m specsim_ext " + filepath.Join(root, "examples", "python", fn) }
	dir := t.TempDir()
	// batches of 32 steps: chunks of 32768 trials, so 50000 trials make two
	// chunks, one per shard
	args := []string{"--external", ext("numpy_verify.py:verify"), "--source", "dirichlet:V=50,a=0.3,beta=0.7", "--gamma", "3", "--trials", "50000", "--batch", "32", "--seed", "5"}
	one := run(t, dir, bin.simulate, append(append([]string{"check"}, args...), "--json")...)
	files := shards(t, dir, "ext", 2, args...)
	merged := run(t, dir, bin.simulate, "check", "--merge", "--json", files[1], files[0])
	if merged.code != one.code {
		t.Errorf("merge exit %d, one process %d: %s", merged.code, one.code, merged.stderr)
	}
	a, b := checkJSON(t, "one process", one), checkJSON(t, "merged", merged)
	delete(a, "steps_per_second")
	delete(b, "steps_per_second")
	sameCheck(t, "external", a, b)
	if impl, _ := b["implementation"].(string); b["verdict"] != "not_detected" || !strings.HasSuffix(impl, "verify") {
		t.Errorf("merged: verdict %v of %v", b["verdict"], b["implementation"])
	}
	other := append([]string{"--external", ext("numpy_verify.py:bug_zero_coin")}, args[2:]...)
	mixed := shards(t, dir, "mixed", 2, other...)
	r := run(t, dir, bin.simulate, "check", "--merge", files[0], mixed[1])
	if r.code != 2 || !strings.Contains(r.stderr, "not shards of one check") {
		t.Errorf("mixed implementations: exit %d %s", r.code, r.stderr)
	}
}
