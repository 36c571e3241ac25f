package sweep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
)

// SlurmResult describes the scripts Slurm wrote (and the jobs it
// submitted); it is the JSON form of 'simulate slurm'. Field names are
// stable.
type SlurmResult struct {
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
	// Warnings say what may not be what was meant (more shards than
	// cells); the front end prints them on stderr, outside the JSON.
	Warnings diag.Warnings `json:"-"`

	sweep, merge string // the scripts' texts
}

// SlurmOptions configures Slurm: what 'simulate slurm' does with its flags.
type SlurmOptions struct {
	// Target is NAME|SPEC; Out the results directory every node reaches.
	Target, Out string
	Shards      int
	Workers     int
	Scale       float64
	ScaleSet    bool
	Seed        uint64
	ClockSeed   func() uint64
	// Partition, Time and Gres go to #SBATCH lines; Report is the report
	// binary (default: next to this executable, else $PATH); Sbatch the
	// sbatch command.
	Partition, Time, Gres, Report, Sbatch string
	// Submit submits both jobs with sbatch.
	Submit bool
}

// Slurm is 'simulate slurm': it writes Out/slurm/sweep.sbatch (a job array
// with one task per shard running 'simulate run') and merge.sbatch
// ('report merge' after every task succeeded) and, with Submit, submits
// both. Errors are marked with their kind (internal/diag); the result
// carries its warnings, with an error too.
func Slurm(ctx context.Context, o SlurmOptions) (SlurmResult, error) {
	job, res, err := slurmJob(o)
	if err != nil {
		return res, err
	}
	sdir := filepath.Join(job.Out, "slurm")
	sweepPath, mergePath := filepath.Join(sdir, "sweep.sbatch"), filepath.Join(sdir, "merge.sbatch")
	for _, p := range []string{sweepPath, mergePath} {
		// the target may be a file the scripts would replace (a spec
		// named DIR/slurm/sweep.sbatch, say)
		if err := results.CheckOutput(p, o.Target); err != nil {
			return res, diag.Param("out", ": %w", err)
		}
	}
	sweep, merge, err := job.Scripts()
	if err != nil {
		return res, diag.Usage(err)
	}
	if err := WriteScripts(sdir, map[string]string{sweepPath: sweep, mergePath: merge}); err != nil {
		return res, err
	}
	sb, plan := o.Sbatch, job.Plan
	res = SlurmResult{Experiment: plan.Exp.Name, Seed: plan.Seed, SpecHash: plan.Spec.Hash(), Cells: len(plan.Cells), Shards: job.Shards, Out: job.Out,
		SweepScript: sweepPath, MergeScript: mergePath, Warnings: res.Warnings, Commands: ArrayCommands(sb, sweepPath, mergePath, nil)}
	res.sweep, res.merge = sweep, merge
	if !o.Submit {
		return res, nil
	}
	if res.ArrayJobID, res.MergeJobID, err = SubmitArray(ctx, sb, sweepPath, mergePath, nil); err != nil {
		return res, err
	}
	res.Submitted = true
	res.Commands = ArrayCommands(sb, sweepPath, mergePath, nil)
	res.Commands[1] = strings.Replace(res.Commands[1], "<array_job_id>", res.ArrayJobID, 1)
	return res, nil
}

// slurmJob checks o and builds the job it describes: the sweep's plan
// (spec, scale, seed), the absolute output directory, and the simulate
// and report binaries. res carries the warnings.
func slurmJob(o SlurmOptions) (SlurmJob, SlurmResult, error) {
	var res SlurmResult
	n := o.Shards
	if n < 1 {
		return SlurmJob{}, res, diag.Param("shards", " = %d; give the number of array tasks (at least 1)", n)
	}
	if o.Out == "" {
		return SlurmJob{}, res, diag.Param("out", " is required: a directory every node can reach")
	}
	if o.Workers < 1 {
		return SlurmJob{}, res, diag.Param("workers", " = %d; use at least 1", o.Workers)
	}
	spec, err := LoadTarget(o.Target)
	if err != nil {
		return SlurmJob{}, res, err
	}
	if err := ApplyScale(spec, o.Scale, o.ScaleSet); err != nil {
		return SlurmJob{}, res, err
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return SlurmJob{}, res, diag.IO(err)
	}
	seed, err := ResolveSeed(o.Seed, spec, out, o.ClockSeed)
	if err != nil {
		return SlurmJob{}, res, err
	}
	plan, err := NewPlan(spec, seed)
	if err != nil {
		return SlurmJob{}, res, diag.Usage(err)
	}
	if n > len(plan.Cells) {
		res.Warnings = append(res.Warnings, fmt.Errorf("%d shards for %d cells; %d tasks will have nothing to do", n, len(plan.Cells), n-len(plan.Cells)))
	}
	target := o.Target
	if _, err := os.Stat(target); err == nil {
		if target, err = filepath.Abs(target); err != nil {
			return SlurmJob{}, res, diag.IO(err)
		}
	}
	self, report, err := Binaries(o.Report)
	if err != nil {
		return SlurmJob{}, res, err
	}
	return SlurmJob{Plan: plan, Target: target, Out: out, Simulate: self, Report: report,
		Shards: n, Workers: o.Workers, Partition: o.Partition, Time: o.Time, Gres: o.Gres}, res, nil
}

// Binaries returns the absolute paths of this simulate binary and of the
// report binary: report when given, else the one next to simulate, else
// the one on $PATH.
func Binaries(report string) (self, rep string, err error) {
	self, err = os.Executable()
	if err != nil {
		return "", "", diag.IO(fmt.Errorf("locating the simulate binary: %w", err))
	}
	if report == "" {
		report = filepath.Join(filepath.Dir(self), "report")
		if _, err := os.Stat(report); err != nil {
			if report, err = exec.LookPath("report"); err != nil {
				return "", "", diag.Usage(fmt.Errorf("the report binary is neither next to %s nor on $PATH; build it (go build -o bin/ ./cmd/report) or give its path", self))
			}
		}
	}
	if rep, err = filepath.Abs(report); err != nil {
		return "", "", diag.IO(err)
	}
	return self, rep, nil
}

// WriteScripts creates dir and writes each script (path to text),
// executable, atomically.
func WriteScripts(dir string, scripts map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return diag.IO(err)
	}
	for p, text := range scripts {
		if err := fsutil.WriteBytes(p, []byte(text), 0o755); err != nil {
			return diag.IO(err)
		}
	}
	return nil
}

// ArrayCommands are the two sbatch command lines that submit an array
// script, with extra arguments (an --array=... override), and the merge
// script after it; the merge's names the array job <array_job_id>.
func ArrayCommands(sb, array, merge string, extra []string) []string {
	a := append([]string{sb, "--parsable"}, extra...)
	return []string{strings.Join(append(a, ShellQuote(array)), " "), sb + " --parsable --dependency=afterok:<array_job_id> " + ShellQuote(merge)}
}

// SubmitArray submits the array script (with the extra sbatch arguments)
// and then the merge script with --dependency=afterok on the array job,
// and returns both job ids.
func SubmitArray(ctx context.Context, sb, array, merge string, extra []string) (arrayID, mergeID string, err error) {
	if arrayID, err = Sbatch(ctx, sb, append(append([]string{"--parsable"}, extra...), array)...); err != nil {
		return "", "", err
	}
	if mergeID, err = Sbatch(ctx, sb, "--parsable", "--dependency=afterok:"+arrayID, merge); err != nil {
		return arrayID, "", fmt.Errorf("%w (the array job %s was submitted; cancel it with scancel %s or submit the merge by hand)", err, arrayID, arrayID)
	}
	return arrayID, mergeID, nil
}

// Sbatch runs the sbatch command sb with args and returns the job id it
// printed (--parsable: "id" or "id;cluster"). It runs in its own process
// group, killed whole on ctx's cancellation or when it prints more than
// maxSbatchOutput bytes (a broken or hostile one may print without end).
func Sbatch(ctx context.Context, sb string, args ...string) (string, error) {
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(cctx, sb, args...)
	stdout, stderr := &capped{max: maxSbatchOutput, over: stop}, &capped{max: maxSbatchOutput, over: stop}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second // a child left holding the pipes
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", diag.Interrupted(fmt.Errorf("interrupted while %s %s ran; it and its process group were killed", sb, strings.Join(args, " ")))
	}
	b := stdout.Bytes()
	if stdout.overflow || stderr.overflow {
		return "", diag.IO(fmt.Errorf("%s %s printed more than %d bytes; it is not sbatch, or it is broken", sb, strings.Join(args, " "), maxSbatchOutput))
	}
	if err != nil {
		return "", diag.IO(fmt.Errorf("%s %s: %v: %s", sb, strings.Join(args, " "), err, clipText(strings.TrimSpace(stderr.String()), 300)))
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(b)), ";")
	if id == "" || strings.ContainsAny(id, " \n") {
		return "", diag.IO(fmt.Errorf("%s --parsable printed %.200q, not a job id", sb, string(b)))
	}
	return id, nil
}

// maxSbatchOutput bounds what the harness keeps of sbatch's output.
const maxSbatchOutput = 64 << 10

// capped keeps the first max bytes written to it; past them it records
// the overflow, calls over (which stops the writer) and discards the rest.
// It has only Write (an embedded bytes.Buffer's ReadFrom would let
// io.Copy bypass the cap).
type capped struct {
	buf      bytes.Buffer
	max      int
	over     func()
	overflow bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if len(p) > room && !c.overflow {
		c.overflow = true
		c.over()
	}
	c.buf.Write(p[:min(len(p), max(room, 0))])
	return len(p), nil
}

func (c *capped) Bytes() []byte  { return c.buf.Bytes() }
func (c *capped) String() string { return c.buf.String() }

// WriteText prints r as 'simulate slurm' does without --json: the
// commands and scripts it would submit, or the submitted job ids.
func (r SlurmResult) WriteText(w io.Writer) error {
	var err error
	if !r.Submitted {
		_, err = fmt.Fprintf(w, "# would submit (seed %d, %d cells in %d shards):\n%s\n%s\n\n# %s\n%s\n# %s\n%s", r.Seed, r.Cells, r.Shards,
			r.Commands[0], r.Commands[1], r.SweepScript, r.sweep, r.MergeScript, r.merge)
		return err
	}
	_, err = fmt.Fprintf(w, "array job %s (%d tasks), merge job %s (afterok:%s); seed %d; results in %s\n", r.ArrayJobID, r.Shards, r.MergeJobID, r.ArrayJobID, r.Seed, r.Out)
	return err
}

// clipText is s cut to n bytes, with " …" when cut.
func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + " …"
	}
	return s
}
