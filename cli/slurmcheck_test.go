package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// TestSlurmCheckRerun: 'simulate slurm --check' writes an array of every
// shard; once shards 0 and 2 have finished states, a rerun lists only 1
// and 3 in --array and submits them, then the merge after them (a fake
// sbatch records its calls); a state of another check in the directory is
// refused with exit 2.
func TestSlurmCheckRerun(t *testing.T) {
	dir := t.TempDir()
	check := []string{"--algo", "token", "--source", "dirichlet:V=20,a=0.3,beta=0.7", "--gamma", "2", "--trials", "40000"}
	slurm := append([]string{"simulate", "slurm", "--check", "--shards", "4", "--out", dir, "--seed", "5", "--json", "--"}, check...)
	var so, se bytes.Buffer
	res := func(args []string) slurmCheckJSON {
		t.Helper()
		so.Reset()
		se.Reset()
		if code := run(&so, &se, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, se.String())
		}
		var r slurmCheckJSON
		if err := json.Unmarshal(so.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := res(slurm); len(r.Pending) != 4 {
		t.Fatalf("first run: pending %v, want all 4", r.Pending)
	}
	for _, i := range []string{"0", "2"} {
		args := append(append([]string{"simulate", "check"}, check...), "--seed", "5", "--shard", i+"/4", "--state-out", filepath.Join(dir, "state", "shard-"+i+".state"))
		if code := run(&so, &se, args); code != 0 {
			t.Fatalf("shard %s: exit %d: %s", i, code, se.String())
		}
	}
	fake := filepath.Join(t.TempDir(), "sbatch")
	logf := fake + ".log"
	os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\" >> "+logf+"\nn=$(wc -l < "+logf+")\necho \"$((n+40));cluster\"\n"), 0o755)
	r := res(append([]string{"simulate", "slurm", "--check", "--shards", "4", "--out", dir, "--seed", "5", "--json", "--submit", "--sbatch", fake, "--"}, check...))
	array, _ := os.ReadFile(r.ArrayScript)
	calls, _ := os.ReadFile(logf)
	if !slices.Equal(r.Pending, []int{1, 3}) || !strings.Contains(string(array), "#SBATCH --array=1,3\n") || !r.Submitted ||
		string(calls) != "--parsable "+r.ArrayScript+"\n--parsable --dependency=afterok:41 "+r.MergeScript+"\n" {
		t.Fatalf("rerun: pending %v, submitted %v, calls\n%s\narray script\n%s", r.Pending, r.Submitted, calls, array)
	}
	// a state of another check (seed 6) where shard 1 belongs
	args := append(append([]string{"simulate", "check"}, check...), "--seed", "6", "--shard", "1/4", "--state-out", filepath.Join(dir, "state", "shard-1.state"))
	if code := run(&so, &se, args); code != 0 {
		t.Fatal(se.String())
	}
	se.Reset()
	if code := run(&so, &se, slurm); code != diag.ExitUsage || !strings.Contains(se.String(), "of another check") {
		t.Fatalf("foreign state: exit %d %s", code, se.String())
	}
}
