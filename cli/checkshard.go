package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/external"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/internal/gitrev"
	"github.com/specsim/specsim/internal/statefile"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim/check"
)

// shardFlags are the flags of a sharded check and of its merge.
func shardFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Usage: "run shard `I/N` (0-based) of the check's trials and write its state to --state-out instead of a verdict; 'simulate check --merge' gives the verdict of the N states"},
		&cli.StringFlag{Name: "state-out", Usage: "with --shard: the shard's state `FILE`; a rerun with the same file continues its finished trials"},
		&cli.BoolFlag{Name: "merge", Usage: "print the verdict of the state files given as arguments (the N shards of one check), as the one-process check prints it; the configuration comes from the files"},
	}
}

// shardJSON is the JSON form of 'simulate check --shard'.
type shardJSON struct {
	Shard        int     `json:"shard"`
	Shards       int     `json:"shards"`
	Seed         uint64  `json:"seed"`
	TrialsDone   int64   `json:"trials_done"`
	TrialsWanted int64   `json:"trials_wanted"`
	Finished     bool    `json:"finished"`
	State        string  `json:"state"`
	StateBytes   int     `json:"state_bytes"`
	Elapsed      float64 `json:"elapsed_seconds"`
}

// shardLimits refuses the flags a shard cannot take, and returns its
// shard and shard count.
func shardLimits(c *cli.Context) (int, int, error) {
	i, n, err := parseShard(c.String("shard"))
	switch {
	case err != nil:
		return 0, 0, err
	case c.String("state-out") == "":
		return 0, 0, diag.Usage(fmt.Errorf("--shard needs --state-out FILE, where the shard's state is written"))
	case c.IsSet("seconds"):
		return 0, 0, diag.Usage(fmt.Errorf("--seconds does not split into shards; give --trials"))
	case c.IsSet("seed") && c.Uint64("seed") == 0:
		return 0, 0, diag.Usage(fmt.Errorf("--seed 0 would draw another seed in every shard; give every shard the same explicit --seed"))
	case c.IsSet("report"):
		return 0, 0, diag.Usage(fmt.Errorf("--report writes the verdict's page; give it to 'simulate check --merge', not to a shard"))
	}
	if err := fsutil.CheckOutput(c.String("state-out")); err != nil {
		return 0, 0, diag.Param("state-out", ": %w", err)
	}
	return i, n, nil
}

// resumeState reads the state file at path when it exists: nil when it
// does not, the state to continue when it holds this shard of this
// check, else an error (another check's state is never overwritten).
func resumeState(path string, h statefile.Header, budget int64) (*check.State, statefile.Header, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, statefile.Header{}, nil
	}
	f, err := statefile.Read(path, budget)
	if err != nil {
		return nil, statefile.Header{}, fmt.Errorf("%w (to start this shard afresh, remove it or give another --state-out)", err)
	}
	g := f.Header
	if name := statefile.ConfigDiff(h.Config, g.Config); name != "" || g.Seed != h.Seed || g.Shard != h.Shard || g.Shards != h.Shards {
		return nil, g, diag.Usage(fmt.Errorf("--state-out %s holds shard %d/%d of another check (seed %d%s); give another --state-out or remove it", path, g.Shard, g.Shards, g.Seed, diffWord(name)))
	}
	st, err := check.UnmarshalState(f.Payload, budget)
	if err != nil {
		return nil, g, diag.Usage(fmt.Errorf("--state-out %s: %v; remove it to start the shard afresh", path, err))
	}
	return st, g, nil
}

// diffWord is ", another --NAME" naming the flag whose value differs,
// or "" when none does.
func diffWord(name string) string {
	if name == "" {
		return ""
	}
	return ", another --" + name
}

// checkShard is 'simulate check --shard I/N --state-out FILE': it runs the
// shard's trials (continuing FILE's finished prefix; an external check
// with its own implementation process) and writes the state, also on
// SIGINT or SIGTERM (then exit 4).
func checkShard(c *cli.Context) error {
	i, n, err := shardLimits(c)
	if err != nil {
		return err
	}
	config, given := shardConfig(c, c.Command.Flags)
	seed := masterSeed(c)
	h := statefile.Header{Config: config, Given: given, Seed: seed, Shard: i, Shards: n, Revision: gitrev.Revision()}
	path := c.String("state-out")
	resume, _, err := resumeState(path, h, memBudget(c))
	if err != nil {
		return err
	}
	ctx, stop := signalContext(c.Context)
	defer stop()
	start := time.Now()
	run := inProcessShard
	if c.IsSet("external") {
		run = externalShard
	}
	st, err := run(ctx, c, &h, resume)
	if st == nil {
		switch {
		case err != nil && ctx.Err() == nil:
			return err
		case ctx.Err() != nil:
			return diag.Interrupted(fmt.Errorf("interrupted before the shard's first trials finished; the state file is as it was"))
		}
		return err
	}
	return writeShard(c, st, h, path, time.Since(start).Seconds(), ctx.Err() != nil)
}

// inProcessShard runs the shard h names of a check of this program's rule.
func inProcessShard(ctx context.Context, c *cli.Context, h *statefile.Header, resume *check.State) (*check.State, error) {
	req, err := checkRequest(c)
	if err != nil {
		return nil, err
	}
	req.Seed, req.Shard, req.Shards = h.Seed, h.Shard, h.Shards
	p, err := resolve.Prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	bar := newHeaded(c.App.ErrWriter, fmt.Sprintf("simulate: check %s, seed %d, shard %d/%d", req.Algo, req.Seed, h.Shard, h.Shards), 0, "trials")
	p.Cfg.Progress = bar.update
	st, err := check.CheckState(ctx, p.Src, p.Rule, p.Cfg, resume)
	bar.done(err != nil && ctx.Err() == nil)
	if err != nil && st == nil && ctx.Err() == nil {
		return nil, diag.Usage(err)
	}
	return st, err
}

// externalShard runs the shard h names of an external check with its own
// implementation process, and records the implementation and its
// components in h.
func externalShard(ctx context.Context, c *cli.Context, h *statefile.Header, resume *check.State) (*check.State, error) {
	cfg, src, err := externalCheck(c, h.Seed)
	if err != nil {
		return nil, err
	}
	cfg.Check.Shard, cfg.Check.Shards = h.Shard, h.Shards
	bar := newHeaded(c.App.ErrWriter, fmt.Sprintf("simulate: check --external %q (%s mode), seed %d, shard %d/%d", cfg.Command, cfg.Mode, h.Seed, h.Shard, h.Shards), 0, "trials")
	cfg.Check.Progress = bar.update
	st, sr, err := external.RunShard(ctx, src, cfg, resume)
	bar.done(err != nil && ctx.Err() == nil)
	if st == nil {
		return nil, err
	}
	h.Implementation, h.Protocol = sr.Implementation, sr.Protocol
	if h.External, err = json.Marshal(sr); err != nil {
		return nil, err
	}
	return st, ctx.Err()
}

// writeShard writes st to path and reports it; interrupted gives exit 4.
func writeShard(c *cli.Context, st *check.State, h statefile.Header, path string, elapsed float64, interrupted bool) error {
	_, _, h.TrialsDone, h.TrialsWanted = st.Progress()
	payload, err := st.MarshalBinary()
	if err != nil {
		return err
	}
	if err := statefile.Write(path, h, payload); err != nil {
		return err
	}
	b, _ := statefile.Encode(h, payload)
	out := shardJSON{Shard: h.Shard, Shards: h.Shards, Seed: h.Seed, TrialsDone: h.TrialsDone, TrialsWanted: h.TrialsWanted,
		Finished: h.Finished(), State: path, StateBytes: len(b), Elapsed: elapsed}
	if err := printResult(c, out, func(w io.Writer) {
		fmt.Fprintf(w, "shard %d/%d, seed %d: %d of %d trials (%.1f s); state written to %s (%d bytes)\n", h.Shard, h.Shards, h.Seed, h.TrialsDone, h.TrialsWanted, elapsed, path, len(b))
	}); err != nil {
		return err
	}
	if interrupted && !h.Finished() {
		return diag.Interrupted(fmt.Errorf("interrupted after %d of the shard's %d trials; its state is in %s: rerun the same command to continue", h.TrialsDone, h.TrialsWanted, path))
	}
	return nil
}

// readStates reads and checks the state files of a merge: the N shards
// of one check, each once and finished.
func readStates(c *cli.Context) ([]statefile.File, []*check.State, error) {
	var files []statefile.File
	for _, path := range c.Args().Slice() {
		f, err := statefile.Read(path, memBudget(c))
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	if err := statefile.Compatible(files); err != nil {
		return nil, nil, err
	}
	states := make([]*check.State, len(files))
	for k, f := range files {
		st, err := check.UnmarshalState(f.Payload, memBudget(c))
		if err != nil {
			return nil, nil, diag.Usage(fmt.Errorf("state file %s: %v; rerun its shard", f.Path, err))
		}
		if s, n, done, want := st.Progress(); s != f.Header.Shard || n != f.Header.Shards || done != want {
			return nil, nil, diag.Usage(fmt.Errorf("state file %s: its header says shard %d/%d, its tallies shard %d/%d with %d of %d trials; rerun its shard", f.Path, f.Header.Shard, f.Header.Shards, s, n, done, want))
		}
		states[k] = st
	}
	return files, states, nil
}

// checkMerge is 'simulate check --merge FILE...': the verdict of the
// shards' states, printed as the one-process check prints it.
func checkMerge(c *cli.Context) error {
	for _, f := range []string{"shard", "state-out", "seconds"} {
		if c.IsSet(f) {
			return diag.Usage(fmt.Errorf("--%s does not apply to --merge, whose configuration comes from the state files; leave it out", f))
		}
	}
	files, states, err := readStates(c)
	if err != nil {
		return err
	}
	nc, err := mergedContext(c, c.Command, files[0].Header)
	if err != nil {
		return err
	}
	if nc.IsSet("external") {
		return externalMerge(c, nc, files, states)
	}
	req, err := checkRequest(nc)
	if err != nil {
		return err
	}
	req.Profile = c.String("report") != ""
	ctx, stop := signalContext(c.Context)
	defer stop()
	start := time.Now()
	p, err := resolve.Prepare(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return diag.Interrupted(fmt.Errorf("interrupted while building the source; nothing to report"))
		}
		return err
	}
	res, err := check.Merge(ctx, p.Src, p.Rule, p.Cfg, states)
	rep, err := p.Finish(ctx, res, err)
	if err != nil {
		if ctx.Err() != nil {
			return diag.Interrupted(fmt.Errorf("interrupted while merging; nothing to report"))
		}
		return err
	}
	cost := costModel{start: start}
	out := newCheckJSON(rep, time.Since(start).Seconds(), newInvocation(nc, algos.IsTree(req.Algo), rep.Draft, cost))
	return printCheckResult(c, out, rep, req.Trials, false)
}

// externalMerge is the merge of an external check's shards: their states
// and their implementation's components, printed as 'check --external'
// prints one process's report. It starts no implementation.
func externalMerge(c, nc *cli.Context, files []statefile.File, states []*check.State) error {
	seed := files[0].Header.Seed
	cfg, src, err := externalCheck(nc, seed)
	if err != nil {
		return err
	}
	cfg.Check.Profile = c.String("report") != ""
	reports := make([]external.ShardReport, len(files))
	for k, f := range files {
		if err := json.Unmarshal(f.Header.External, &reports[k]); err != nil {
			return diag.Usage(fmt.Errorf("state file %s: its external shard report does not decode (%v); rerun its shard", f.Path, err))
		}
	}
	ctx, stop := signalContext(c.Context)
	defer stop()
	rep, err := external.MergeShards(ctx, src, cfg, states, reports)
	if err != nil {
		if ctx.Err() != nil {
			return diag.Interrupted(fmt.Errorf("interrupted while merging; nothing to report"))
		}
		return err
	}
	if err := printExternal(c, rep, newInvocation(nc, cfg.Mode == external.Tree, rep.Draft, costModel{start: time.Now()})); err != nil {
		return err
	}
	return checkExit(false, rep.Implementation, rep.Report, cfg.Check.Trials)
}
