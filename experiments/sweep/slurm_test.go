package sweep_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/specsim/specsim/experiments/sweep"
	"github.com/specsim/specsim/internal/diag"
)

// A partition or time limit that would break out of its #SBATCH line is
// rejected naming the field (diag.ParamError, which the command line shows
// as its flag); a plain one lands on its own line.
func TestSlurmScriptsQuote(t *testing.T) {
	s, err := sweep.DefaultSpec("leviathan-table1")
	if err != nil {
		t.Fatal(err)
	}
	s.Scale = 1
	p, err := sweep.NewPlan(s, 7)
	if err != nil {
		t.Fatal(err)
	}
	j := sweep.SlurmJob{Plan: p, Target: "leviathan-table1", Out: "/o", Simulate: "/b/simulate", Report: "/b/report", Shards: 3, Workers: 2}
	for _, bad := range []struct{ part, time, gres, field string }{{"gpu\nrm -rf /", "", "", "partition"}, {"", "1:00\n", "", "time"}, {"a b", "", "", "partition"},
		{"", "", "gpu:1\nrm -rf /", "gres"}} {
		j.Partition, j.Time, j.Gres = bad.part, bad.time, bad.gres
		_, _, err := j.Scripts()
		var pe *diag.ParamError
		if !errors.As(err, &pe) || pe.Name != bad.field || !strings.HasPrefix(err.Error(), bad.field+" ") || !errors.Is(err, diag.ErrUsage) {
			t.Errorf("partition %q time %q: %v", bad.part, bad.time, err)
		}
	}
	j.Partition, j.Time, j.Gres = "gpu", "01:00:00", "gpu:1"
	sweep, merge, err := j.Scripts()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --partition=gpu\n#SBATCH --time=01:00:00\n#SBATCH --gres=gpu:1\nset -euo pipefail\n", "#SBATCH --array=0-2\n",
		"exec '/b/simulate' run 'leviathan-table1' --out '/o' --seed 7 --workers 2 --scale 1\n"} {
		if !strings.Contains(sweep, want) {
			t.Errorf("sweep script lacks %q:\n%s", want, sweep)
		}
	}
	if !strings.Contains(merge, "exec '/b/report' merge '/o' --out '/o/merged.parquet'\n") {
		t.Errorf("merge script:\n%s", merge)
	}
}
