package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPlanShardsLine: plan's answer in shards is the planned trials
// split into tasks that fit --task-time at --rate, exactly, and the
// 'simulate slurm --check' line it prints is accepted by the command line
// and writes the array of that many shards with the planned trials.
func TestPlanShardsLine(t *testing.T) {
	dir := t.TempDir()
	var so, se bytes.Buffer
	args := []string{"simulate", "plan", "--tv", "0.05", "--algo", "token", "--source", "dirichlet:V=50,a=0.3,beta=0.7", "--gamma", "3",
		"--seed", "5", "--rate", "1000", "--task-time", "10s", "--out", dir, "--json"}
	if code := run(&so, &se, args); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, se.String())
	}
	var p planJSON
	if err := json.Unmarshal(so.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	// 1000 trials/s × 10 s × 0.8 = 8000 trials per task
	if want := (p.Trials + 7999) / 8000; p.Shards != want || p.RateFrom != "--rate" || p.Rate != 1000 {
		t.Fatalf("plan of %d trials: %d shards from %s %g; want %d", p.Trials, p.Shards, p.RateFrom, p.Rate, want)
	}
	line := strings.Fields(p.Slurm)
	if line[0] != "simulate" || line[1] != "slurm" {
		t.Fatalf("printed line %q", p.Slurm)
	}
	so.Reset()
	se.Reset()
	if code := run(&so, &se, append([]string{"simulate", "slurm", "--json"}, line[2:]...)); code != 0 {
		t.Fatalf("%s: exit %d: %s", p.Slurm, code, se.String())
	}
	var s slurmCheckJSON
	if err := json.Unmarshal(so.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	array, _ := os.ReadFile(filepath.Join(dir, "slurm", "check-array.sbatch"))
	if int64(s.Shards) != p.Shards || s.Seed != 5 || len(s.Pending) != s.Shards ||
		!strings.Contains(string(array), "'--trials' '"+itoa64(p.Trials)+"'") || !strings.Contains(string(array), "'--gamma' '3'") {
		t.Fatalf("slurm --check from the plan: %+v\n%s", s, array)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
