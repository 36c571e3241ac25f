package check_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
)

// shardCase is a check run whole and in shards.
type shardCase struct {
	name string
	src  sim.Source
	rule check.Rule
	cfg  check.Config
}

// runShards runs every shard of c's check in n shards, each state through
// MarshalBinary and UnmarshalState, and returns the states shuffled.
func runShards(t *testing.T, c shardCase, n int) []*check.State {
	t.Helper()
	var states []*check.State
	for i := range n {
		cfg := c.cfg
		cfg.Shard, cfg.Shards = i, n
		st, err := check.CheckState(context.Background(), c.src, c.rule, cfg, nil)
		if err != nil {
			t.Fatalf("%s: shard %d/%d: %v", c.name, i, n, err)
		}
		states = append(states, roundTrip(t, st))
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(states), func(i, j int) { states[i], states[j] = states[j], states[i] })
	return states
}

// roundTrip marshals st, requires the same bytes twice, and unmarshals it.
func roundTrip(t *testing.T, st *check.State) *check.State {
	t.Helper()
	b, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := st.MarshalBinary()
	if string(b) != string(b2) {
		t.Fatal("MarshalBinary wrote different bytes for one state")
	}
	back, err := check.UnmarshalState(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	b3, _ := back.MarshalBinary()
	if string(b3) != string(b) {
		t.Fatal("a state unmarshalled and marshalled again changed its bytes")
	}
	return back
}

// timeless clears a result's timings (not in the states).
func timeless(r check.Result) check.Result {
	r.CPUSeconds, r.TVAtOneCPUSecond = 0, 0
	return r
}

// TestShardsMergeEqualsCheck: four shards of a check, each through its
// marshalled state and merged in shuffled order, give exactly Check's
// result on the same configuration: every test's statistic, df, p and
// Holm p, the p-value, the verdict, the counts, the fits and the claim
// (reflect.DeepEqual on the whole Result, timings aside). It holds for a
// chain rule with its law test and candidates' fits (float sums), a tree
// rule, a batch check with the cross-row tests, and a planted bug, which
// is violated.
func TestShardsMergeEqualsCheck(t *testing.T) {
	t.Parallel()
	dir := newSource(t, "dirichlet:V=200,a=0.3,beta=0.7", 3, 5)
	token := check.ChainRule("token", algos.Token{})
	token.Name = "token"
	var cands []check.Candidate
	for _, name := range []string{"token", "mutant-resample-p"} {
		cands = append(cands, check.Candidate{Name: name, Law: mustAlgo(t, name).(sim.Lawer)})
	}
	pl := smallPool(t)
	tree := check.Rule{Name: "specinfer", Tree: algos.SpecInfer{}, TreeLaw: algos.SpecInfer{}, Draft: sim.DraftIID, K: 2,
		Drafter: func(q sim.Model, depth int) (sim.Drafter, error) {
			return draft.NewTree(sim.DraftIID, draft.Config{Q: q, K: 2, Depth: depth})
		}}
	cases := []shardCase{
		{"token", dir, token, check.Config{Trials: 200000, Seed: 5, Workers: 2, Candidates: cands}},
		{"mutant-resample-p", dir, check.ChainRule("mutant-resample-p", mustAlgo(t, "mutant-resample-p")), check.Config{Trials: 200000, Seed: 5, Workers: 2}},
		{"tree", sim.Source{Spec: pl.Name, BlockSource: pl}, tree, check.Config{Trials: 40000, Seed: 4, Workers: 2}},
		// batches of 16 with the rows-of-a-batch tests: the adjacent and
		// half-shift pairs and the prefix tests in re-drawn cells (their
		// epochs split across shards) merge exactly too
		{"batch", dir, token, check.Config{Trials: 64000, Seed: 5, Workers: 2, Batch: 16, CrossRow: true}},
	}
	for _, c := range cases {
		want, err := check.Check(context.Background(), c.src, c.rule, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := check.Merge(context.Background(), c.src, c.rule, c.cfg, runShards(t, c, 4))
		if err != nil {
			t.Fatalf("%s: merge: %v", c.name, err)
		}
		if !reflect.DeepEqual(timeless(got), timeless(want)) {
			t.Errorf("%s: merged shards differ from one process:\n got %+v\nwant %+v", c.name, timeless(got), timeless(want))
		}
		if c.name == "mutant-resample-p" && got.Verdict != check.Violated {
			t.Errorf("planted bug merged from shards: verdict %s, want violated", got.Verdict)
		}
		if c.name != "mutant-resample-p" && got.Verdict != check.NotDetected {
			t.Errorf("%s: verdict %s, want not_detected", c.name, got.Verdict)
		}
		if c.name == "batch" && (!hasTest(want.Tests, "rows half a batch apart (independence, first tokens)") || !hasTest(want.Tests, "position 1 given its context and prefix (re-drawn cells)")) {
			t.Errorf("batch: the half-shift or re-drawn-cell tests did not run: %d tests", len(want.Tests))
		}
		if len(want.Tests) < 5 || (c.name == "token" && (len(want.Fits) != 2 || !hasTest(want.Tests, "sampler vs own law"))) {
			t.Errorf("%s: the case does not exercise the tests it should: %d tests, %d fits", c.name, len(want.Tests), len(want.Fits))
		}
	}
}

func hasTest(ts []check.Test, name string) bool {
	for _, x := range ts {
		if x.Name == name {
			return true
		}
	}
	return false
}

// smallShards is a quick check run in shards for the refusal tests.
func smallShards(t testing.TB) shardCase {
	t.Helper()
	return shardCase{"token", newSource(t, "dirichlet:V=200,a=0.3,beta=0.7", 3, 5), check.ChainRule("token", algos.Token{}),
		check.Config{Trials: 60000, Seed: 5, Workers: 2}}
}

// TestMergeRefuses: three of four shards, a shard twice, shards of two
// seeds, an unfinished shard and states of another configuration are
// refused with an error that wraps diag.ErrUsage and says why.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	c := smallShards(t)
	states := runShards(t, c, 4)
	other := c
	other.cfg.Seed = 6
	seed6 := runShards(t, other, 4)
	gamma := c
	gamma.src = newSource(t, "dirichlet:V=200,a=0.3,beta=0.7", 2, 5)
	ctx, cancel := context.WithCancel(context.Background())
	partial := c.cfg
	partial.Shard, partial.Shards = 0, 1
	partial.Progress = func(done, total int64) { cancel() }
	unfinished, err := check.CheckState(ctx, c.src, c.rule, partial, nil)
	if !errors.Is(err, context.Canceled) || unfinished == nil {
		t.Fatalf("cancelled shard: state %v, error %v", unfinished, err)
	}
	for _, r := range []struct {
		name   string
		c      shardCase
		states []*check.State
		want   string
	}{
		{"three of four", c, states[:3], "missing"},
		{"a shard twice", c, append(states[:4:4], states[0]), "given twice"},
		{"two seeds", c, append(states[:3:3], seed6[3]), "of seed 6, not 5"},
		{"unfinished", c, []*check.State{roundTrip(t, unfinished)}, "not finished"},
		{"another draft length", gamma, states, "of another configuration"},
		{"no states", c, nil, "no states"},
	} {
		_, err := check.Merge(context.Background(), r.c.src, r.c.rule, r.c.cfg, r.states)
		if !errors.Is(err, diag.ErrUsage) || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: error %v, want a usage error saying %q", r.name, err, r.want)
		}
	}
}

// TestResumeEqualsWhole: a shard cancelled after its first chunk keeps a
// state of whole chunks; resumed from it (through its bytes) it finishes,
// and the merged result equals Check's exactly.
func TestResumeEqualsWhole(t *testing.T) {
	t.Parallel()
	c := smallShards(t)
	c.cfg.Trials = 200000
	states := runShards(t, c, 2)
	for i, st := range states {
		if shard, _, _, _ := st.Progress(); shard != 0 {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		cfg := c.cfg
		cfg.Shard, cfg.Shards = 0, 2
		// one worker: the chunk that reports first is chunk 0, merged
		// before the cancellation is seen
		cfg.Workers = 1
		cfg.Progress = func(done, total int64) { cancel() }
		part, err := check.CheckState(ctx, c.src, c.rule, cfg, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled shard: %v", err)
		}
		_, _, done, want := part.Progress()
		if done == 0 || done >= want || done%(sim.ChunkSize*16) != 0 {
			t.Fatalf("cancelled shard holds %d of %d trials; want a positive whole number of chunks", done, want)
		}
		cfg.Progress, cfg.Workers = nil, 2
		rest, err := check.CheckState(context.Background(), c.src, c.rule, cfg, roundTrip(t, part))
		if err != nil {
			t.Fatal(err)
		}
		states[i] = roundTrip(t, rest)
	}
	want, err := check.Check(context.Background(), c.src, c.rule, c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := check.Merge(context.Background(), c.src, c.rule, c.cfg, states)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(timeless(got), timeless(want)) {
		t.Errorf("resumed shard merged: p %v, tests %v; one process: p %v, tests %v", got.PValue, got.Tests, want.PValue, want.Tests)
	}
}

// TestStateDamaged: a state cut short at any length, or with any of its
// bytes flipped, is refused with a usage error (the checksum), never a
// panic; one whose tallies are over the memory budget it was read under
// is refused when they are read (by Merge).
func TestStateDamaged(t *testing.T) {
	t.Parallel()
	c := smallShards(t)
	c.cfg.Trials = 5000
	st, err := check.CheckState(context.Background(), c.src, c.rule, c.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.MarshalBinary()
	for n := 0; n < len(b); n += 1 + n/16 {
		if _, err := check.UnmarshalState(b[:n], 0); !errors.Is(err, diag.ErrUsage) {
			t.Fatalf("truncated to %d of %d bytes: error %v", n, len(b), err)
		}
	}
	for i := 0; i < len(b); i += 1 + i/32 {
		d := append([]byte(nil), b...)
		d[i] ^= 0x10
		if _, err := check.UnmarshalState(d, 0); !errors.Is(err, diag.ErrUsage) {
			t.Fatalf("byte %d flipped: error %v", i, err)
		}
	}
	small, err := check.UnmarshalState(b, 1024)
	if err == nil {
		_, err = check.Merge(context.Background(), c.src, c.rule, c.cfg, []*check.State{small})
	}
	if !errors.Is(err, diag.ErrUsage) || !strings.Contains(err.Error(), "budget") {
		t.Errorf("a state over a 1 KiB budget: error %v", err)
	}
	if _, err := check.UnmarshalState(b, 0); err != nil {
		t.Errorf("the intact state: %v", err)
	}
}

// TestShardConfigErrors: a shard outside 0..N-1 and a time budget with
// shards are refused as usage errors.
func TestShardConfigErrors(t *testing.T) {
	t.Parallel()
	c := smallShards(t)
	for _, cfg := range []check.Config{
		{Trials: 100, Shard: 4, Shards: 4}, {Trials: 100, Shard: -1, Shards: 4}, {Trials: 100, Shard: 1},
		{Seconds: 1, Shards: 2},
	} {
		if _, err := check.CheckState(context.Background(), c.src, c.rule, cfg, nil); !errors.Is(err, diag.ErrUsage) {
			t.Errorf("shard %d/%d seconds %g: error %v, want a usage error", cfg.Shard, cfg.Shards, cfg.Seconds, err)
		}
	}
}

// TestShardRange: for any trial count, batch and shard count the ranges
// are contiguous, cover every unit once, and start on chunk boundaries.
func TestShardRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		trials, batch, n := 1+rng.Int64N(1e8), 1+rng.IntN(64), 1+rng.IntN(40)
		units := (trials + int64(batch) - 1) / int64(batch)
		at := int64(0)
		for i := range n {
			lo, hi := check.ShardRange(trials, batch, i, n)
			if lo != at || hi < lo || (lo%sim.ChunkSize != 0 && lo != units) {
				t.Fatalf("trials %d batch %d: shard %d/%d is %d..%d after %d", trials, batch, i, n, lo, hi, at)
			}
			at = hi
		}
		if at != units {
			t.Fatalf("trials %d batch %d shards %d: ranges end at %d of %d units", trials, batch, n, at, units)
		}
	}
}

// TestMergeRefusesOtherFamilies: a state whose header names another
// family list (here "hashed" renamed "hushed", as a build with another
// family would write it, its checksum recomputed) is refused by this
// build's merge and resume, naming the family it lacks and the one in
// excess.
func TestMergeRefusesOtherFamilies(t *testing.T) {
	t.Parallel()
	c := smallShards(t)
	c.cfg.Trials = 5000
	st, err := check.CheckState(context.Background(), c.src, c.rule, c.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.MarshalBinary()
	body := b[:len(b)-sha256.Size]
	i := bytes.Index(body, []byte("\x06hashed"))
	if i < 0 {
		t.Fatal("the state's header does not name the hashed family")
	}
	d := slices.Clone(body)
	copy(d[i+1:], "hushed")
	sum := sha256.Sum256(d)
	other, err := check.UnmarshalState(append(d, sum[:]...), 0)
	if err != nil {
		t.Fatalf("the renamed state does not read: %v", err)
	}
	want := `it lacks families ["hashed"] and has families ["hushed"] this build does not`
	_, err = check.Merge(context.Background(), c.src, c.rule, c.cfg, []*check.State{other})
	if !errors.Is(err, diag.ErrUsage) || !strings.Contains(err.Error(), want) {
		t.Errorf("merge: error %v, want a usage error saying %q", err, want)
	}
	_, err = check.CheckState(context.Background(), c.src, c.rule, c.cfg, other)
	if !errors.Is(err, diag.ErrUsage) || !strings.Contains(err.Error(), want) {
		t.Errorf("resume: error %v, want a usage error saying %q", err, want)
	}
}
