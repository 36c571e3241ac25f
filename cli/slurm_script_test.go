package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/experiments/sweep"
	"github.com/specsim/specsim/internal/diag"
)

// 'simulate slurm' writes the array and merge scripts and, with --submit,
// chains the merge job to the array with afterok (a fake sbatch records
// its arguments, so this runs without a cluster).
func TestSlurmScripts(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(repoRoot(t), "experiments", "specs", "small.toml")
	var so, se bytes.Buffer
	args := []string{"simulate", "slurm", spec, "--shards", "3", "--out", dir, "--partition", "cpu", "--time", "00:10:00",
		"--workers", "2", "--report", "/usr/bin/true", "--json"}
	if code := run(&so, &se, args); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	var res sweep.SlurmResult
	if err := json.Unmarshal(so.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Submitted || res.Seed != 20240601 || res.Cells != 18 || res.Shards != 3 {
		t.Fatalf("dry run: %+v", res)
	}
	array, _ := os.ReadFile(res.SweepScript)
	merge, _ := os.ReadFile(res.MergeScript)
	for _, want := range []string{"#SBATCH --array=0-2\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --partition=cpu\n", "#SBATCH --time=00:10:00\n",
		"run '" + spec + "' --out '" + dir + "' --seed 20240601 --workers 2 --scale 1\n"} {
		if !strings.Contains(string(array), want) {
			t.Errorf("sweep script lacks %q:\n%s", want, array)
		}
	}
	if !strings.Contains(string(merge), "exec '/usr/bin/true' merge '"+dir+"' --out '"+filepath.Join(dir, "merged.parquet")+"'") {
		t.Errorf("merge script:\n%s", merge)
	}
	if !strings.Contains(res.Commands[1], "--dependency=afterok:<array_job_id>") {
		t.Errorf("commands %v", res.Commands)
	}

	// --submit with a fake sbatch printing "id;cluster" as --parsable does.
	fake := filepath.Join(dir, "sbatch")
	logf := filepath.Join(dir, "sbatch.log")
	os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\" >> "+logf+"\nn=$(wc -l < "+logf+")\necho \"$((n+40));cluster\"\n"), 0o755)
	so.Reset()
	se.Reset()
	if code := run(&so, &se, append(args, "--submit", "--sbatch", fake)); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, se.String())
	}
	json.Unmarshal(so.Bytes(), &res)
	if !res.Submitted || res.ArrayJobID != "41" || res.MergeJobID != "42" {
		t.Fatalf("submitted %+v", res)
	}
	calls, _ := os.ReadFile(logf)
	want := "--parsable " + res.SweepScript + "\n--parsable --dependency=afterok:41 " + res.MergeScript + "\n"
	if string(calls) != want {
		t.Errorf("sbatch calls\n%s\nwant\n%s", calls, want)
	}
	// Bad input is a usage error naming the flag.
	se.Reset()
	if code := run(&so, &se, []string{"simulate", "slurm", spec, "--shards", "0", "--out", dir}); code != diag.ExitUsage || !strings.Contains(se.String(), "--shards") {
		t.Errorf("--shards 0: exit %d %s", code, se.String())
	}
}

// 'simulate run' keeps printing rows as JSON without --out, and its
// --out summary reports computed and skipped cells.
func TestRunJSONAndOut(t *testing.T) {
	spec := filepath.Join(repoRoot(t), "experiments", "specs", "small.toml")
	var so, se bytes.Buffer
	if code := run(&so, &se, []string{"simulate", "run", spec, "--json", "--shard", "1/3"}); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(so.Bytes(), &rows); err != nil || len(rows) != 6 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if rows[0]["algo"] != "token" || rows[0]["replicate"] != 1.0 || rows[0]["seed"] != 20240601.0 {
		t.Errorf("first row of shard 1/3 (cell 1): %v", rows[0])
	}
	dir := t.TempDir()
	for i, want := range []string{`"computed": 18`, `"skipped": 18`} {
		so.Reset()
		if code := run(&so, &se, []string{"simulate", "run", spec, "--out", dir, "--workers", "2", "--json"}); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, se.String())
		}
		if !strings.Contains(so.String(), want) {
			t.Errorf("run %d: %s lacks %s", i, so.String(), want)
		}
	}
	se.Reset()
	if code := run(&so, &se, []string{"simulate", "run", spec, "--shard", "3/3"}); code != diag.ExitUsage || !strings.Contains(se.String(), "--shard") {
		t.Errorf("--shard 3/3: exit %d %s", code, se.String())
	}
}
