package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/experiments/sweep"
	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/internal/statefile"
)

// slurmCheckJSON is the JSON form of 'simulate slurm --check'. Field
// names are stable.
type slurmCheckJSON struct {
	Seed        uint64   `json:"seed"`
	Shards      int      `json:"shards"`
	Out         string   `json:"out"`
	CheckArgs   []string `json:"check_args"`
	ArrayScript string   `json:"array_script"`
	MergeScript string   `json:"merge_script"`
	// Pending are the shards whose state file is missing or unfinished:
	// the array tasks submitted (all of them on a first run).
	Pending    []int    `json:"pending"`
	Commands   []string `json:"commands"`
	Submitted  bool     `json:"submitted"`
	ArrayJobID string   `json:"array_job_id,omitempty"`
	MergeJobID string   `json:"merge_job_id,omitempty"`

	array, merge string // the scripts' texts
}

// notInSlurmCheck are the check flags 'simulate slurm --check' sets
// itself, or that a shard does not take.
var notInSlurmCheck = []string{"shard", "state-out", "merge", "json", "report", "seconds", "seed", "workers"}

// slurmCheckContext parses the check flags after "--" and refuses those
// that slurm sets itself; the context also holds the master seed.
func slurmCheckContext(c *cli.Context, seed uint64) (*cli.Context, []string, error) {
	args := c.Args().Slice()
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains(notInSlurmCheck, name) {
			return nil, nil, diag.Usage(fmt.Errorf("--check: the check flag --%s is set by simulate slurm (--seed and --workers are slurm's own flags, given before --); leave it out", name))
		}
	}
	args = append(slices.Clone(args), "--seed="+strconv.FormatUint(seed, 10))
	nc, err := commandContext(c, checkCommand(), args)
	if err != nil {
		return nil, nil, diag.Usage(fmt.Errorf("--check: the check flags after -- do not parse: %v; give them as 'simulate check' takes them", err))
	}
	if err := checkLimits(nc); err != nil {
		return nil, nil, err
	}
	return nc, args, nil
}

var checkArrayTmpl = template.Must(template.New("array").Parse(`#!/bin/bash
# Written by 'simulate slurm --check': one array task per shard of a check of
# {{.Trials}} trials in {{.Shards}} shards, master seed {{.Seed}}. Each task writes
# its state to {{.States}}/shard-<i>.state; a re-submitted or resumed task
# continues its finished trials. SIGTERM (Slurm's preemption, or --signal
# before the time limit) writes the state and exits 4.
#SBATCH --job-name=specsim-check
#SBATCH --array={{.Array}}
#SBATCH --cpus-per-task={{.Workers}}
#SBATCH --signal=B:TERM@60
#SBATCH --output={{.Log}}
{{.Header}}set -euo pipefail
exec {{.Run}} --shard "${SLURM_ARRAY_TASK_ID}/{{.Shards}}" --state-out "{{.States}}/shard-${SLURM_ARRAY_TASK_ID}.state"
`))

var checkMergeTmpl = template.Must(template.New("merge").Parse(`#!/bin/bash
# Written by 'simulate slurm --check': the verdict of the {{.Shards}} shards once
# every task succeeded (rerun it as 'simulate check --merge ... --json' for JSON).
#SBATCH --job-name=specsim-check-merge
#SBATCH --output={{.MergeLog}}
{{.MergeHeader}}set -euo pipefail
exec {{.Merge}}
`))

// slurmCheckScripts returns the texts of the array and merge scripts of
// a sharded check: self is simulate, global its global flags, args the
// check's flags, pending the array's task ids.
func slurmCheckScripts(c, nc *cli.Context, self string, global, args []string, out string, seed uint64, pending []int) (array, merge string, err error) {
	hdr, err := sweep.SbatchHeader(c.String("partition"), c.String("time"), c.String("gres"))
	if err != nil {
		return "", "", err // a ParamError: the command line shows its flag
	}
	mhdr, _ := sweep.SbatchHeader(c.String("partition"), c.String("time"), "") // the merge needs no GPU
	if strings.ContainsAny(out, "\n\r\"$`\\") {
		return "", "", diag.Usage(fmt.Errorf("--out %q holds a character a script's quoted path cannot (a line break, \", $, ` or \\); use a plain path", out))
	}
	n, w := c.Int("shards"), c.Int("workers")
	q := func(words []string) string {
		var s []string
		for _, a := range words {
			s = append(s, sweep.ShellQuote(a))
		}
		return strings.Join(s, " ")
	}
	ids := []string{fmt.Sprintf("0-%d", n-1)} // nothing pending: the whole array, should it be submitted by hand
	if len(pending) > 0 {
		ids = ids[:0]
		for _, p := range pending {
			ids = append(ids, strconv.Itoa(p))
		}
	}
	run := q(append(append(append([]string{self}, global...), "check"), append(args, "--workers", strconv.Itoa(w))...))
	states := filepath.Join(out, "state")
	mergeArgs := append(append(append([]string{self}, global...), "check", "--merge"), statePaths(states, n)...)
	v := map[string]any{"Trials": nc.Int64("trials"), "Shards": n, "Seed": seed, "States": states, "Array": strings.Join(ids, ","), "Workers": w,
		"Log": filepath.Join(out, "slurm", "check-%A_%a.out"), "MergeLog": filepath.Join(out, "slurm", "check-merge-%j.out"),
		"Header": hdr, "MergeHeader": mhdr, "Run": run, "Merge": q(mergeArgs)}
	var a, b strings.Builder
	if err := checkArrayTmpl.Execute(&a, v); err != nil {
		return "", "", err
	}
	if err := checkMergeTmpl.Execute(&b, v); err != nil {
		return "", "", err
	}
	return a.String(), b.String(), nil
}

// statePaths are the state files of n shards in dir.
func statePaths(dir string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.state", i))
	}
	return out
}

// pendingShards returns the shards of a check of config and seed whose
// state file in dir is missing or unfinished; a state file of another
// check (configuration, seed or shard count) is refused.
func pendingShards(dir string, n int, config map[string][]string, seed uint64, budget int64) ([]int, error) {
	var pending []int
	for i, p := range statePaths(dir, n) {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			pending = append(pending, i)
			continue
		}
		f, err := statefile.Read(p, budget)
		if err != nil {
			return nil, err
		}
		h := f.Header
		if name := statefile.ConfigDiff(config, h.Config); name != "" || h.Seed != seed || h.Shards != n || h.Shard != i {
			return nil, diag.Usage(fmt.Errorf("%s holds shard %d of %d of another check (seed %d, --%s %q); give another --out or remove it", p, h.Shard, h.Shards, h.Seed, name, strings.Join(h.Config[name], ",")))
		}
		if !h.Finished() {
			pending = append(pending, i)
		}
	}
	return pending, nil
}

// slurmCheckAction is 'simulate slurm --check': it writes (and with
// --submit submits) an array job of the check's pending shards and a merge
// job after it.
func slurmCheckAction(c *cli.Context) error {
	for _, f := range []string{"scale", "report"} {
		if c.IsSet(f) {
			return diag.Usage(fmt.Errorf("--%s applies to a sweep, not to --check; leave it out", f))
		}
	}
	n := c.Int("shards")
	if n < 1 {
		return diag.Usage(fmt.Errorf("--shards = %d; give the number of array tasks (at least 1)", n))
	}
	if c.String("out") == "" || c.Int("workers") < 1 {
		return diag.Usage(fmt.Errorf("--out DIR (a directory every node reaches) is required and --workers is at least 1"))
	}
	seed := masterSeed(c)
	nc, args, err := slurmCheckContext(c, seed)
	if err != nil {
		return err
	}
	out, err := filepath.Abs(c.String("out"))
	if err != nil {
		return diag.IO(err)
	}
	config, _ := shardConfig(nc, nc.Command.Flags)
	pending, err := pendingShards(filepath.Join(out, "state"), n, config, seed, memBudget(c))
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return diag.IO(fmt.Errorf("locating the simulate binary: %w", err))
	}
	var global []string
	if p := c.Lineage(); len(p) > 1 && p[1].IsSet("mem-budget") {
		global = []string{"--mem-budget", fmt.Sprint(p[1].Float64("mem-budget"))}
	}
	array, merge, err := slurmCheckScripts(c, nc, self, global, args, out, seed, pending)
	if err != nil {
		return err
	}
	res := slurmCheckJSON{Seed: seed, Shards: n, Out: out, CheckArgs: args, Pending: pending, array: array, merge: merge,
		ArrayScript: filepath.Join(out, "slurm", "check-array.sbatch"), MergeScript: filepath.Join(out, "slurm", "check-merge.sbatch")}
	if err := sweep.WriteScripts(filepath.Join(out, "slurm"), map[string]string{res.ArrayScript: array, res.MergeScript: merge}); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "state"), 0o755); err != nil {
		return diag.IO(err)
	}
	if err := res.submit(c.Context, c.String("sbatch"), c.Bool("submit")); err != nil {
		return err
	}
	if c.Bool("json") {
		return cliutil.WriteJSON(c.App.Writer, res)
	}
	return res.writeText(escape.TerminalWriter(c.App.Writer))
}

// submit fills r's commands and, when submit is set, submits them: the
// array of the pending shards then the merge after it, or the merge alone
// when no shard is pending.
func (r *slurmCheckJSON) submit(ctx context.Context, sb string, submit bool) error {
	sctx, stop := signalContext(ctx)
	defer stop()
	if len(r.Pending) == 0 {
		r.Commands = []string{sb + " --parsable " + sweep.ShellQuote(r.MergeScript)}
		if submit {
			id, err := sweep.Sbatch(sctx, sb, "--parsable", r.MergeScript)
			r.MergeJobID, r.Submitted = id, err == nil
			return err
		}
		return nil
	}
	r.Commands = sweep.ArrayCommands(sb, r.ArrayScript, r.MergeScript, nil)
	if !submit {
		return nil
	}
	a, m, err := sweep.SubmitArray(sctx, sb, r.ArrayScript, r.MergeScript, nil)
	if err != nil {
		return err
	}
	r.ArrayJobID, r.MergeJobID, r.Submitted = a, m, true
	r.Commands[1] = strings.Replace(r.Commands[1], "<array_job_id>", a, 1)
	return nil
}

// writeText prints r as 'simulate slurm --check' does without --json.
func (r slurmCheckJSON) writeText(w io.Writer) error {
	var err error
	switch {
	case r.Submitted && r.ArrayJobID == "":
		_, err = fmt.Fprintf(w, "every shard is finished; merge job %s; seed %d; states in %s\n", r.MergeJobID, r.Seed, filepath.Join(r.Out, "state"))
	case r.Submitted:
		_, err = fmt.Fprintf(w, "array job %s (%d of %d shards), merge job %s (afterok:%s); seed %d; states in %s\n", r.ArrayJobID, len(r.Pending), r.Shards, r.MergeJobID, r.ArrayJobID, r.Seed, filepath.Join(r.Out, "state"))
	default:
		_, err = fmt.Fprintf(w, "# would submit (seed %d, %d of %d shards pending):\n%s\n\n# %s\n%s\n# %s\n%s", r.Seed, len(r.Pending), r.Shards,
			strings.Join(r.Commands, "\n"), r.ArrayScript, r.array, r.MergeScript, r.merge)
	}
	return err
}
