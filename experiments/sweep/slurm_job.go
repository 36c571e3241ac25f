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
	// Partition and Time go to #SBATCH lines; Report is the report
	// binary (default: next to this executable, else $PATH); Sbatch the
	// sbatch command.
	Partition, Time, Report, Sbatch string
	// Submit submits both jobs with sbatch.
	Submit bool
}

// Slurm is 'simulate slurm': it writes Out/slurm/sweep.sbatch (a job array
// with one task per shard running 'simulate run') and merge.sbatch
// ('report merge' after every task succeeded) and, with Submit, submits
// both. Errors are marked with their kind (internal/diag); the result
// carries its warnings, with an error too.
func Slurm(ctx context.Context, o SlurmOptions) (SlurmResult, error) {
	var res SlurmResult
	n := o.Shards
	if n < 1 {
		return res, diag.Param("shards", " = %d; give the number of array tasks (at least 1)", n)
	}
	if o.Out == "" {
		return res, diag.Param("out", " is required: a directory every node can reach")
	}
	if o.Workers < 1 {
		return res, diag.Param("workers", " = %d; use at least 1", o.Workers)
	}
	arg := o.Target
	spec, err := LoadTarget(arg)
	if err != nil {
		return res, err
	}
	if err := ApplyScale(spec, o.Scale, o.ScaleSet); err != nil {
		return res, err
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return res, diag.IO(err)
	}
	seed, err := ResolveSeed(o.Seed, spec, out, o.ClockSeed)
	if err != nil {
		return res, err
	}
	plan, err := NewPlan(spec, seed)
	if err != nil {
		return res, diag.Usage(err)
	}
	if n > len(plan.Cells) {
		res.Warnings = append(res.Warnings, fmt.Errorf("%d shards for %d cells; %d tasks will have nothing to do", n, len(plan.Cells), n-len(plan.Cells)))
	}
	target := arg
	if _, err := os.Stat(arg); err == nil {
		if target, err = filepath.Abs(arg); err != nil {
			return res, diag.IO(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return res, diag.IO(fmt.Errorf("locating the simulate binary: %w", err))
	}
	report := o.Report
	if report == "" {
		report = filepath.Join(filepath.Dir(self), "report")
		if _, err := os.Stat(report); err != nil {
			if report, err = exec.LookPath("report"); err != nil {
				return res, diag.Usage(fmt.Errorf("the report binary is neither next to %s nor on $PATH; build it (go build -o bin/ ./cmd/report) or give its path", self))
			}
		}
	}
	if report, err = filepath.Abs(report); err != nil {
		return res, diag.IO(err)
	}
	sdir := filepath.Join(out, "slurm")
	sweepPath, mergePath := filepath.Join(sdir, "sweep.sbatch"), filepath.Join(sdir, "merge.sbatch")
	for _, p := range []string{sweepPath, mergePath} {
		// the target may be a file the scripts would replace (a spec
		// named DIR/slurm/sweep.sbatch, say)
		if err := results.CheckOutput(p, arg); err != nil {
			return res, diag.Param("out", ": %w", err)
		}
	}
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return res, diag.IO(err)
	}
	sweep, merge, err := SlurmJob{Plan: plan, Target: target, Out: out, Simulate: self, Report: report,
		Shards: n, Workers: o.Workers, Partition: o.Partition, Time: o.Time}.Scripts()
	if err != nil {
		return res, diag.Usage(err)
	}
	for p, text := range map[string]string{sweepPath: sweep, mergePath: merge} {
		if err := fsutil.WriteBytes(p, []byte(text), 0o755); err != nil {
			return res, diag.IO(err)
		}
	}
	sb := o.Sbatch
	res = SlurmResult{Experiment: plan.Exp.Name, Seed: seed, SpecHash: spec.Hash(), Cells: len(plan.Cells), Shards: n, Out: out,
		SweepScript: sweepPath, MergeScript: mergePath, Warnings: res.Warnings,
		Commands: []string{sb + " --parsable " + ShellQuote(sweepPath), sb + " --parsable --dependency=afterok:<array_job_id> " + ShellQuote(mergePath)}}
	res.sweep, res.merge = sweep, merge
	if !o.Submit {
		return res, nil
	}
	submit := func(args ...string) (string, error) {
		// sbatch prints a job id: keep at most maxSbatchOutput bytes of
		// each stream, and stop an sbatch that prints more (a broken or
		// hostile one may print without end)
		cctx, stop := context.WithCancel(ctx)
		defer stop()
		cmd := exec.CommandContext(cctx, sb, args...)
		stdout, stderr := &capped{max: maxSbatchOutput, over: stop}, &capped{max: maxSbatchOutput, over: stop}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.WaitDelay = 5 * time.Second // a child left holding the pipes
		// its own process group, killed whole on Ctrl-C or an overflow:
		// sbatch (or a wrapper script) and any child it started
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
		id, _, _ := strings.Cut(strings.TrimSpace(string(b)), ";") // --parsable: "id" or "id;cluster"
		if id == "" || strings.ContainsAny(id, " \n") {
			return "", diag.IO(fmt.Errorf("%s --parsable printed %.200q, not a job id", sb, string(b)))
		}
		return id, nil
	}
	if res.ArrayJobID, err = submit("--parsable", sweepPath); err != nil {
		return res, err
	}
	if res.MergeJobID, err = submit("--parsable", "--dependency=afterok:"+res.ArrayJobID, mergePath); err != nil {
		return res, fmt.Errorf("%w (the array job %s was submitted; cancel it with scancel %s or submit the merge by hand)", err, res.ArrayJobID, res.ArrayJobID)
	}
	res.Submitted = true
	res.Commands[1] = strings.Replace(res.Commands[1], "<array_job_id>", res.ArrayJobID, 1)
	return res, nil
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
