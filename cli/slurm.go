package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/experiments"
)

func init() { register(slurmCommand) }

// slurmJSON is the JSON form of 'simulate slurm'. Field names are stable.
type slurmJSON struct {
	Experiment  string   `json:"experiment"`
	Seed        uint64   `json:"seed"`
	SpecHash    string   `json:"spec_hash"`
	Cells       int      `json:"cells"`
	Shards      int      `json:"shards"`
	Out         string   `json:"out"`
	SweepScript string   `json:"sweep_script"`
	MergeScript string   `json:"merge_script"`
	Commands    []string `json:"commands"`
	Submitted   bool     `json:"submitted"`
	ArrayJobID  string   `json:"array_job_id,omitempty"`
	MergeJobID  string   `json:"merge_job_id,omitempty"`
}

func slurmCommand() *cli.Command {
	return &cli.Command{
		Name:  "slurm",
		Usage: "write (and with --submit, submit) a Slurm job array running a sweep shard per task, and a merge job after it",
		Description: `Writes DIR/slurm/sweep.sbatch, a job array with one task per shard, each
running 'simulate run NAME|SPEC --out DIR' (the shard comes from
SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT), and DIR/slurm/merge.sbatch,
running 'report merge DIR' once every task succeeded
(--dependency=afterok:<array job>). The master seed is fixed in the
scripts, so every task and any re-submission compute the same cells.`,
		ArgsUsage: "NAME|SPEC",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "shards", Usage: "number of array tasks `N` (required)"},
			&cli.StringFlag{Name: "out", Usage: "results directory `DIR` shared by all tasks (required)"},
			&cli.StringFlag{Name: "partition", Usage: "Slurm partition (#SBATCH --partition)"},
			&cli.StringFlag{Name: "time", Usage: "time limit per task, e.g. 01:00:00 (#SBATCH --time)"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: "cells in parallel per task (also --cpus-per-task)"},
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "multiply the default trial counts"},
			&cli.StringFlag{Name: "report", Usage: "path of the report binary (default: next to simulate, else $PATH)"},
			&cli.StringFlag{Name: "sbatch", Value: "sbatch", Usage: "sbatch command"},
			&cli.BoolFlag{Name: "submit", Usage: "submit both jobs with sbatch and print their ids"},
			seedFlag(), jsonFlag(),
		},
		Action: slurmAction,
	}
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func slurmAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usage(fmt.Errorf("slurm needs one experiment name or spec file"))
	}
	n := c.Int("shards")
	if n < 1 {
		return cliutil.Usage(fmt.Errorf("--shards = %d; give the number of array tasks (at least 1)", n))
	}
	if c.String("out") == "" {
		return cliutil.Usage(fmt.Errorf("--out is required: a directory every node can reach"))
	}
	if c.Int("workers") < 1 {
		return cliutil.Usage(fmt.Errorf("--workers = %d; use at least 1", c.Int("workers")))
	}
	arg := c.Args().First()
	spec, err := loadSpec(arg)
	if err != nil {
		return err
	}
	if c.IsSet("scale") || spec.Scale == 0 {
		if !(c.Float64("scale") > 0) {
			return cliutil.Usage(fmt.Errorf("--scale = %g; use a positive factor", c.Float64("scale")))
		}
		spec.Scale = c.Float64("scale")
	}
	out, err := filepath.Abs(c.String("out"))
	if err != nil {
		return cliutil.IO(err)
	}
	seed, err := resolveSeed(c, spec, out)
	if err != nil {
		return err
	}
	plan, err := experiments.NewPlan(spec, seed)
	if err != nil {
		return cliutil.Usage(err)
	}
	if n > len(plan.Cells) {
		fmt.Fprintf(c.App.ErrWriter, "simulate: warning: %d shards for %d cells; %d tasks will have nothing to do\n", n, len(plan.Cells), n-len(plan.Cells))
	}
	target := arg
	if _, err := os.Stat(arg); err == nil {
		if target, err = filepath.Abs(arg); err != nil {
			return cliutil.IO(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return cliutil.IO(fmt.Errorf("locating the simulate binary: %w", err))
	}
	report := c.String("report")
	if report == "" {
		report = filepath.Join(filepath.Dir(self), "report")
		if _, err := os.Stat(report); err != nil {
			if report, err = exec.LookPath("report"); err != nil {
				return cliutil.Usage(fmt.Errorf("the report binary is neither next to %s nor on $PATH; build it (go build ./cmd/report) or pass --report PATH", self))
			}
		}
	}
	if report, err = filepath.Abs(report); err != nil {
		return cliutil.IO(err)
	}
	sdir := filepath.Join(out, "slurm")
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return cliutil.IO(err)
	}
	name := "specsim-" + plan.Exp.Name
	var hdr bytes.Buffer
	opt := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&hdr, "#SBATCH --%s=%s\n", k, v)
		}
	}
	opt("partition", c.String("partition"))
	opt("time", c.String("time"))
	run := []string{shellQuote(self), "run", shellQuote(target), "--out", shellQuote(out),
		"--seed", fmt.Sprint(seed), "--workers", fmt.Sprint(c.Int("workers")), "--scale", fmt.Sprint(spec.Scale)}
	sweep := fmt.Sprintf(`#!/bin/bash
# Written by 'simulate slurm': one array task per shard of %s (%d cells,
# spec %.12s, master seed %d). Each task runs shard
# SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT; re-submitting resumes.
#SBATCH --job-name=%s
#SBATCH --array=0-%d
#SBATCH --cpus-per-task=%d
#SBATCH --output=%s
%sset -euo pipefail
exec %s
`, plan.Exp.Name, len(plan.Cells), spec.Hash(), seed, name, n-1, c.Int("workers"),
		filepath.Join(sdir, "sweep-%A_%a.out"), hdr.String(), strings.Join(run, " "))
	merge := fmt.Sprintf(`#!/bin/bash
# Written by 'simulate slurm': merges every cell of %s once the array succeeded.
#SBATCH --job-name=%s-merge
#SBATCH --output=%s
%sset -euo pipefail
exec %s merge %s --out %s
`, plan.Exp.Name, name, filepath.Join(sdir, "merge-%j.out"), hdr.String(), shellQuote(report), shellQuote(out),
		shellQuote(filepath.Join(out, "merged.parquet")))
	sweepPath, mergePath := filepath.Join(sdir, "sweep.sbatch"), filepath.Join(sdir, "merge.sbatch")
	for p, text := range map[string]string{sweepPath: sweep, mergePath: merge} {
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			return cliutil.IO(err)
		}
	}
	sb := c.String("sbatch")
	res := slurmJSON{Experiment: plan.Exp.Name, Seed: seed, SpecHash: spec.Hash(), Cells: len(plan.Cells), Shards: n, Out: out,
		SweepScript: sweepPath, MergeScript: mergePath,
		Commands: []string{sb + " --parsable " + shellQuote(sweepPath), sb + " --parsable --dependency=afterok:<array_job_id> " + shellQuote(mergePath)}}
	w := c.App.Writer
	if !c.Bool("submit") {
		if c.Bool("json") {
			return cliutil.WriteJSON(w, res)
		}
		fmt.Fprintf(w, "# would submit (seed %d, %d cells in %d shards):\n%s\n%s\n\n# %s\n%s\n# %s\n%s", seed, len(plan.Cells), n,
			res.Commands[0], res.Commands[1], sweepPath, sweep, mergePath, merge)
		return nil
	}
	submit := func(args ...string) (string, error) {
		cmd := exec.CommandContext(c.Context, sb, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			return "", cliutil.IO(fmt.Errorf("%s %s: %v: %s", sb, strings.Join(args, " "), err, strings.TrimSpace(stderr.String())))
		}
		id, _, _ := strings.Cut(strings.TrimSpace(string(b)), ";") // --parsable: "id" or "id;cluster"
		if id == "" || strings.ContainsAny(id, " \n") {
			return "", cliutil.IO(fmt.Errorf("%s --parsable printed %q, not a job id", sb, string(b)))
		}
		return id, nil
	}
	if res.ArrayJobID, err = submit("--parsable", sweepPath); err != nil {
		return err
	}
	if res.MergeJobID, err = submit("--parsable", "--dependency=afterok:"+res.ArrayJobID, mergePath); err != nil {
		return fmt.Errorf("%w (the array job %s was submitted; cancel it with scancel %s or submit the merge by hand)", err, res.ArrayJobID, res.ArrayJobID)
	}
	res.Submitted = true
	res.Commands[1] = strings.Replace(res.Commands[1], "<array_job_id>", res.ArrayJobID, 1)
	if c.Bool("json") {
		return cliutil.WriteJSON(w, res)
	}
	fmt.Fprintf(w, "array job %s (%d tasks), merge job %s (afterok:%s); seed %d; results in %s\n", res.ArrayJobID, n, res.MergeJobID, res.ArrayJobID, seed, out)
	return nil
}
