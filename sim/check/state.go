package check

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
)

// Shards of one check (issue 31). A check of n trials in batches of b has
// U = ⌈n/b⌉ units, and unit u draws from the streams keyed by u whichever
// process runs it; shard i of N runs a contiguous range of them
// (ShardRange), so the union of the N shards' trials is exactly the
// one-process run's. Every layout that depends on the trial count (the
// pool's binning, the PIT grids, the law test's stride and bins, the
// fits' steps) is sized for the whole run's n in every shard. The ranges
// are whole chunks of sim.ChunkSize units, the chunks the one-process
// run merges, and a merged tally sums its chunks' floating-point moments
// exactly (stattest.ExactSum): so the shards' states merged give the
// one-process run's tallies bit for bit, and its statistics and p-values.

// State is the state of one shard of a check (or of the whole run): the
// merged tallies of the finished prefix of its units, what run they
// belong to, and a fingerprint of the configuration that laid them out.
// CheckState makes one, MarshalBinary and UnmarshalState carry it across
// processes, Merge combines a run's shards into its verdict.
type State struct {
	shard, shards int
	// lo, hi are the shard's units, next the first not yet run.
	lo, hi, next int64
	// trials are those finished, want the whole run's trial count.
	trials, want int64
	seed         uint64
	batch        int
	rule, source string
	fp           [32]byte
	// fams names the state's families, in order (the runner's
	// familyNames): a state of another family list is refused (same).
	fams []string
	// tot is the merged tally of a state made in this process; payload
	// the tallies' bytes of an unmarshalled one, read (under budget)
	// once a run's configuration is known (tally).
	tot     *tally
	payload []byte
	budget  int64
	// rn is the runner that made the state (nil once unmarshalled), cpu
	// the process CPU time its trials took in this process (neither is
	// in the payload: a state's bytes depend on its trials alone).
	rn  *runner
	cpu time.Duration
}

// ShardRange returns the units [lo, hi) of shard shard of shards of a run
// of trials trials in batches of batch: the run's ⌈trials/batch⌉ units
// in C = ⌈units/sim.ChunkSize⌉ chunks, shard i taking chunks
// [i·C/N, (i+1)·C/N) (a shard may be empty when N > C). shards <= 1 is
// the whole run.
func ShardRange(trials int64, batch, shard, shards int) (lo, hi int64) {
	b := int64(max(batch, 1))
	units := (max(trials, 0) + b - 1) / b
	if shards <= 1 {
		return 0, units
	}
	chunks := (units + sim.ChunkSize - 1) / sim.ChunkSize
	at := func(i int) int64 { return min(chunks*int64(i)/int64(shards)*sim.ChunkSize, units) }
	return at(shard), at(shard + 1)
}

// CheckState runs cfg's shard (Config.Shard of Config.Shards; the whole
// run when Shards <= 1) of the check of r on src, continuing resume's
// finished prefix when resume is not nil (a state of the same shard and
// configuration). On a cancellation of ctx it returns the state of the
// finished prefix (whole chunks of units) with ctx.Err(); another error
// returns a nil state.
func CheckState(ctx context.Context, src sim.Source, r Rule, cfg Config, resume *State) (*State, error) {
	return checkState(ctx, src, r, cfg, resume, true)
}

// checkState is CheckState; whole keeps only whole chunks on a
// cancellation (CheckState's resumable prefix), where Check keeps every
// finished trial (its interrupted report).
func checkState(ctx context.Context, src sim.Source, r Rule, cfg Config, resume *State, whole bool) (*State, error) {
	rn, err := newCheck(ctx, src, r, cfg)
	if err != nil {
		return nil, err
	}
	st := rn.newState(src.Spec)
	if resume != nil {
		if err := st.resume(resume); err != nil {
			return nil, err
		}
	}
	cpu0 := run.ProcessCPU()
	tot, trials, err := rn.runRange(ctx, st.next, st.hi, whole)
	if tot == nil {
		return nil, err
	}
	st.cpu = max(run.ProcessCPU()-cpu0, 0)
	merge(st.tot, tot)
	if st.tot.err != nil {
		return nil, st.tot.err
	}
	b := int64(rn.cfg.Batch)
	st.trials += trials
	st.next += (trials + b - 1) / b
	return st, err
}

// newState is the empty state of the runner's shard.
func (rn *runner) newState(source string) *State {
	cfg := rn.cfg
	st := &State{shard: cfg.Shard, shards: max(cfg.Shards, 1), want: rn.n, seed: cfg.Seed, batch: cfg.Batch,
		rule: rn.rule.Name, source: source, fp: rn.fingerprint(source), rn: rn, tot: rn.newTally(), fams: rn.familyNames()}
	st.lo, st.hi = ShardRange(rn.n, cfg.Batch, st.shard, st.shards)
	st.next = st.lo
	return st
}

// resume continues st from prev's finished prefix, refused (wrapping
// diag.ErrUsage) unless prev is a state of the same shard and
// configuration.
func (st *State) resume(prev *State) error {
	if err := st.same(prev); err != nil {
		return err
	}
	if prev.shard != st.shard || prev.shards != st.shards || prev.lo != st.lo || prev.hi != st.hi || prev.next < prev.lo || prev.next > prev.hi {
		return diag.Usage(fmt.Errorf("check: the state to resume is shard %d/%d (units %d..%d), not shard %d/%d (units %d..%d); resume each shard from its own state",
			prev.shard, prev.shards, prev.lo, prev.hi, st.shard, st.shards, st.lo, st.hi))
	}
	pt, err := prev.tally(st.rn)
	if err != nil {
		return err
	}
	merge(st.tot, pt)
	st.next, st.trials = prev.next, prev.trials
	return st.tot.err
}

// Progress returns the state's shard and shard count, the trials it has
// finished and the trials its shard runs (done == want: finished).
func (s *State) Progress() (shard, shards int, done, want int64) {
	return s.shard, s.shards, s.trials, s.rangeTrials()
}

// rangeTrials is the number of trials of the state's units.
func (s *State) rangeTrials() int64 {
	b := int64(max(s.batch, 1))
	return max(min(s.hi*b, s.want)-s.lo*b, 0)
}

// Merge combines the states of every shard of one check into its
// verdict: the Result that Check gives for cfg with Shard and Shards
// zero (same trials, statistics and p-values; CPU time is not in the
// states, so CPUSeconds is NaN). It refuses, with an error wrapping
// diag.ErrUsage, a missing or duplicated shard, a shard not finished,
// and states of another configuration (rule, source, seed, trials,
// batch or any layout of the tests) than cfg's.
func Merge(ctx context.Context, src sim.Source, r Rule, cfg Config, states []*State) (Result, error) {
	if cfg.Seconds > 0 {
		return Result{}, diag.Usage(fmt.Errorf("check: merge: seconds = %g; a time budget does not apply to shards: give the trials the shards ran", cfg.Seconds))
	}
	cfg.Shard, cfg.Shards = 0, 0
	rn, err := newCheck(ctx, src, r, cfg)
	if err != nil {
		return Result{}, err
	}
	ref := rn.newState(src.Spec)
	tot, trials, err := ref.mergeStates(states)
	if err != nil {
		return Result{}, err
	}
	return rn.assemble(tot, trials, false, 0)
}

// same refuses (wrapping diag.ErrUsage) a state o of another run than
// s's: another rule, source, seed, trial count, batch or layout.
func (s *State) same(o *State) error {
	var why string
	switch {
	case o.rule != s.rule:
		why = fmt.Sprintf("of rule or implementation %q, not %q", o.rule, s.rule)
	case o.source != s.source:
		why = fmt.Sprintf("of source %q, not %q", o.source, s.source)
	case o.seed != s.seed:
		why = fmt.Sprintf("of seed %d, not %d", o.seed, s.seed)
	case o.want != s.want:
		why = fmt.Sprintf("of a run of %d trials, not %d", o.want, s.want)
	case o.batch != s.batch:
		why = fmt.Sprintf("of batch %d, not %d", o.batch, s.batch)
	case familyDiff(o.fams, s.fams) != nil:
		why = familyDiff(o.fams, s.fams).Error()
	case o.fp != s.fp:
		why = "of another configuration (draft length, law test, row kinds, candidates or test layout differ)"
	default:
		return nil
	}
	return diag.Usage(fmt.Errorf("check: shard %d/%d is a state %s; give the states of one run with that run's flags", o.shard, o.shards, why))
}

// tally returns the state's merged tally for runner rn: its own, or the
// one its payload holds, read against rn's layout.
func (s *State) tally(rn *runner) (*tally, error) {
	if s.tot != nil {
		if s.rn != nil && s.rn.fingerprint(s.source) != rn.fingerprint(s.source) {
			return nil, diag.Usage(errors.New("check: a state of another configuration; give the states of one run with that run's flags"))
		}
		return s.tot, nil
	}
	return rn.readTally(s.payload, s.budget)
}

// mergeStates checks that states are every shard of ref's run, each
// once and finished, and returns their merged tally and trials.
func (ref *State) mergeStates(states []*State) (*tally, int64, error) {
	if len(states) == 0 {
		return nil, 0, diag.Usage(errors.New("check: merge: no states; give every shard's state"))
	}
	n := states[0].shards
	byShard := make([]*State, n)
	for _, s := range states {
		if err := ref.same(s); err != nil {
			return nil, 0, err
		}
		if s.shards != n {
			return nil, 0, diag.Usage(fmt.Errorf("check: merge: states of %d and %d shards; give the states of one split", n, s.shards))
		}
		if byShard[s.shard] != nil {
			return nil, 0, diag.Usage(fmt.Errorf("check: merge: shard %d/%d given twice; give each shard's state once", s.shard, n))
		}
		byShard[s.shard] = s
	}
	var missing []int
	for i, s := range byShard {
		if s == nil {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		return nil, 0, diag.Usage(fmt.Errorf("check: merge: shards %v of %d are missing; run them (or give their states)", missing, n))
	}
	tot, trials := ref.rn.newTally(), int64(0)
	for i, s := range byShard {
		lo, hi := ShardRange(ref.want, ref.batch, i, n)
		if s.lo != lo || s.hi != hi {
			return nil, 0, diag.Usage(fmt.Errorf("check: merge: shard %d/%d holds units %d..%d, not %d..%d (a damaged state)", i, n, s.lo, s.hi, lo, hi))
		}
		if _, _, done, want := s.Progress(); s.next != s.hi || done != want {
			return nil, 0, diag.Usage(fmt.Errorf("check: merge: shard %d/%d is not finished (%d of %d trials); run it again with its state to finish it", i, n, done, want))
		}
		st, err := s.tally(ref.rn)
		if err != nil {
			return nil, 0, err
		}
		merge(tot, st)
		trials += s.trials
	}
	return tot, trials, tot.err
}
