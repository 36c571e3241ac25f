package sweep

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/template"
	"unicode"

	"github.com/specsim/specsim/internal/diag"
)

// SlurmJob describes the two batch scripts of a sharded sweep on Slurm: a
// job array with one task per shard running Simulate's 'run', and a merge
// job running Report's 'merge' once every task succeeded.
type SlurmJob struct {
	Plan *Plan
	// Target is the NAME|SPEC argument of 'simulate run' (a spec file as
	// an absolute path); Out the results directory every node can reach.
	Target, Out string
	// Simulate and Report are the absolute paths of the two binaries.
	Simulate, Report string
	Shards, Workers  int
	// Partition, Time and Gres go to #SBATCH --partition, --time and
	// --gres when set.
	Partition, Time, Gres string
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CheckSbatchValue rejects a value that cannot stand on one #SBATCH line
// (a newline or another control character would end the directive and
// start a shell line), or that holds a space or quote sbatch would not
// read back.
func CheckSbatchValue(name, v string) error {
	for _, r := range v {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == '\'' || r == '"' || r == '\\' {
			return diag.Param(name, " %q holds %q, which cannot stand in an #SBATCH line; give a plain value such as %s",
				v, r, map[string]string{"partition": "gpu", "time": "01:00:00", "gres": "gpu:1"}[name])
		}
	}
	return nil
}

var sweepTmpl = template.Must(template.New("sweep").Parse(`#!/bin/bash
# Written by 'simulate slurm': one array task per shard of {{.Exp}} ({{.Cells}} cells,
# spec {{.Hash}}, master seed {{.Seed}}). Each task runs shard
# SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT; re-submitting resumes.
#SBATCH --job-name={{.Name}}
#SBATCH --array=0-{{.Last}}
#SBATCH --cpus-per-task={{.Workers}}
#SBATCH --output={{.SweepLog}}
{{.Header}}set -euo pipefail
exec {{.Run}}
`))

var mergeTmpl = template.Must(template.New("merge").Parse(`#!/bin/bash
# Written by 'simulate slurm': merges every cell of {{.Exp}} once the array succeeded.
#SBATCH --job-name={{.Name}}-merge
#SBATCH --output={{.MergeLog}}
{{.Header}}set -euo pipefail
exec {{.Merge}}
`))

// Scripts returns the texts of the sweep and merge scripts, which are to
// be written to Out/slurm/sweep.sbatch and merge.sbatch. A value that
// cannot stand in a script (a partition or time limit with a newline,
// space or quote) is an error naming the flag.
func (j SlurmJob) Scripts() (sweep, merge string, err error) {
	if strings.ContainsAny(j.Out, "\n\r") {
		return "", "", diag.Param("out", " %q holds a line break; use a path without one", j.Out)
	}
	for _, p := range []struct{ what, v string }{{"the simulate path", j.Simulate}, {"the report path", j.Report}} {
		if strings.ContainsAny(p.v, "\n\r") {
			return "", "", fmt.Errorf("%s %q holds a line break; use a path without one", p.what, p.v)
		}
	}
	hdr, err := SbatchHeader(j.Partition, j.Time, j.Gres)
	if err != nil {
		return "", "", err
	}
	p := j.Plan
	sdir := filepath.Join(j.Out, "slurm")
	run := []string{ShellQuote(j.Simulate), "run", ShellQuote(j.Target), "--out", ShellQuote(j.Out),
		"--seed", fmt.Sprint(p.Seed), "--workers", fmt.Sprint(j.Workers), "--scale", fmt.Sprint(p.Spec.Scale)}
	v := map[string]any{
		"Exp": p.Exp.Name, "Cells": len(p.Cells), "Hash": fmt.Sprintf("%.12s", p.Spec.Hash()), "Seed": p.Seed,
		"Name": "specsim-" + p.Exp.Name, "Last": j.Shards - 1, "Workers": j.Workers,
		"SweepLog": filepath.Join(sdir, "sweep-%A_%a.out"), "MergeLog": filepath.Join(sdir, "merge-%j.out"),
		"Header": hdr, "Run": strings.Join(run, " "),
		"Merge": ShellQuote(j.Report) + " merge " + ShellQuote(j.Out) + " --out " + ShellQuote(filepath.Join(j.Out, "merged.parquet")),
	}
	var a, b strings.Builder
	if err := sweepTmpl.Execute(&a, v); err != nil {
		return "", "", err
	}
	if err := mergeTmpl.Execute(&b, v); err != nil {
		return "", "", err
	}
	return a.String(), b.String(), nil
}

// SbatchHeader returns the #SBATCH lines of the given partition, time
// limit and generic resources (each left out when empty), refusing a
// value that cannot stand on such a line (CheckSbatchValue).
func SbatchHeader(partition, time, gres string) (string, error) {
	var hdr strings.Builder
	for _, d := range []struct{ name, v string }{{"partition", partition}, {"time", time}, {"gres", gres}} {
		if err := CheckSbatchValue(d.name, d.v); err != nil {
			return "", err
		}
		if d.v != "" {
			fmt.Fprintf(&hdr, "#SBATCH --%s=%s\n", d.name, d.v)
		}
	}
	return hdr.String(), nil
}
