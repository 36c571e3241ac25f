package check

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"

	"github.com/specsim/specsim/internal/binenc"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
)

// A state's payload (MarshalBinary): stateMagic, the format revision
// stateVersion, the header (shard, shards, units, trials, seed, batch,
// rule, source, the configuration's fingerprint, the names of the
// state's families in order), the merged tally, and the SHA-256 of
// everything before it. A family added or removed changes the names, not
// stateVersion: a state of another family list is refused by name
// (familyDiff).
const (
	stateMagic   = "specsim check state\x00"
	stateVersion = 4 // 4: the header names the families (issue 27)
	// maxFamilies bounds a state's family count.
	maxFamilies = 64
	// maxShards bounds a state's shard count.
	maxShards = 1 << 20
)

// fingerprint hashes everything that lays out or fills the run's tallies
// (not the level or power, which only the assembly reads): two states
// merge only when theirs are equal.
func (rn *runner) fingerprint(source string) [32]byte {
	r, cfg, w, p := rn.rule, rn.cfg, rn.w, rn.pit
	var cands []string
	for _, c := range cfg.Candidates {
		cands = append(cands, c.Name)
	}
	s := fmt.Sprintf("v%d|rule %q law %q conform %t tree %t draft %v k %d branch %v|source %q g %d v %d contexts %d states %d bins %d jb %d joint %d|trials %d seed %d batch %d greedy %t|marg %t law %t every %d lb %d fit %d %q|pit %d %d %d %d %t|pos %d jlen %d|kinds %q off %q gammas %v",
		stateVersion, r.Name, r.LawName, r.Conform, r.isTree(), r.Draft, r.K, r.Branch,
		source, w.g, w.v, w.nc, w.states, w.bins, w.jb, w.jointLen,
		rn.n, cfg.Seed, cfg.Batch, cfg.Greedy,
		rn.marg, rn.lawOn, rn.lawEvery, rn.lb, rn.fitSteps, cands,
		p.g1, p.bins, p.pb, p.cb, p.cross, rn.posLen, rn.jLen,
		cfg.RowKinds, cfg.LawKindsOff, cfg.KindGammas)
	return sha256.Sum256([]byte(s))
}

// MarshalBinary writes the state: versioned, with its run's identity and
// fingerprint and a checksum; the bytes depend on the state's trials
// alone (the same shard run twice writes the same bytes).
func (s *State) MarshalBinary() ([]byte, error) {
	b := []byte(stateMagic)
	b = binenc.AppendUvarint(b, stateVersion)
	for _, x := range []int64{int64(s.shard), int64(s.shards), s.lo, s.hi, s.next, s.trials, s.want, int64(s.batch)} {
		b = binenc.AppendVarint(b, x)
	}
	b = binenc.AppendUvarint(b, s.seed)
	b = binenc.AppendBytes(b, []byte(s.rule))
	b = binenc.AppendBytes(b, []byte(s.source))
	b = binenc.AppendBytes(b, s.fp[:])
	b = binenc.AppendUvarint(b, uint64(len(s.fams)))
	for _, n := range s.fams {
		b = binenc.AppendBytes(b, []byte(n))
	}
	if s.tot != nil {
		b = s.tot.appendBinary(b)
	} else {
		b = append(b, s.payload...)
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...), nil
}

// UnmarshalState reads a state written by MarshalBinary, allocating at
// most budget bytes (0: sim.DefaultMemBudget). A payload that is damaged
// (its checksum), of another format revision, malformed or over the
// budget is refused with an error wrapping diag.ErrUsage, never a panic.
func UnmarshalState(b []byte, budget int64) (*State, error) {
	bad := func(err error) (*State, error) {
		return nil, diag.Usage(fmt.Errorf("check: state: %w", err))
	}
	if budget <= 0 {
		budget = sim.DefaultMemBudget
	}
	if len(b) < len(stateMagic)+sha256.Size || !bytes.HasPrefix(b, []byte(stateMagic)) {
		return bad(errors.New("not a check state (no header); give the bytes of a shard's State.MarshalBinary"))
	}
	body := b[:len(b)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[len(body):]) {
		return bad(errors.New("its checksum does not match: the file is damaged or truncated; run the shard again"))
	}
	r := binenc.NewReader(body[len(stateMagic):], budget)
	if v := r.Uvarint(); r.Err() == nil && v != stateVersion {
		return bad(fmt.Errorf("format revision %d, but this build reads revision %d; merge with the build that wrote it or run the shard again", v, stateVersion))
	}
	s := &State{budget: budget}
	s.readHeader(r)
	if err := r.Err(); err != nil {
		return bad(err)
	}
	// the tallies are read against a run's configuration (tally)
	s.payload = body[len(body)-r.Len():]
	return s, nil
}

// readHeader reads the state's identity and checks its ranges.
func (s *State) readHeader(r *binenc.Reader) {
	s.shard = int(r.Int("shard", 0, maxShards))
	s.shards = int(r.Int("shards", 1, maxShards))
	s.lo = r.Int("first unit", 0, sim.MaxTrials)
	s.hi = r.Int("end unit", s.lo, sim.MaxTrials)
	s.next = r.Int("next unit", s.lo, s.hi)
	s.trials = r.Int("trials", 0, sim.MaxTrials)
	s.want = r.Int("run trials", 1, sim.MaxTrials)
	s.batch = int(r.Int("batch", 1, maxBatch))
	s.seed = r.Uvarint()
	s.rule, s.source = string(r.Bytes()), string(r.Bytes())
	fp := r.Bytes()
	if r.Err() == nil && (len(fp) != len(s.fp) || s.shard >= s.shards) {
		r.Fail(errors.New("a malformed header"))
	}
	copy(s.fp[:], fp)
	n := r.Count(1)
	if r.Err() == nil && n > maxFamilies {
		r.Fail(fmt.Errorf("%d families, over the %d a state may hold", n, maxFamilies))
	}
	for i := 0; i < n && r.Err() == nil; i++ {
		s.fams = append(s.fams, string(r.Bytes()))
	}
}

// appendBinary appends a merged tally: its summary counts and fits, the
// binned counts, each row kind's counts, then every family's section.
func (t *tally) appendBinary(b []byte) []byte {
	b = binenc.AppendInts(b, []int64{t.accepted, t.examined, t.emitted, t.emitSq, t.invalid, t.fitN})
	b = binenc.AppendUvarint(b, uint64(len(t.fitSum)))
	for i := range t.fitSum {
		b = t.fitSum[i].AppendBinary(b)
	}
	b = binenc.AppendUvarint(b, uint64(len(t.kinds)))
	for _, k := range t.kinds {
		b = binenc.AppendInts(b, []int64{k.n, k.invalid, k.emitted})
	}
	return t.appendFamilies(b)
}

// readCounts reads a slice of counts into dst, refusing another length
// or a negative count.
func readCounts(r *binenc.Reader, what string, dst []int64) {
	xs := r.Ints()
	switch {
	case r.Err() != nil:
	case len(xs) != len(dst):
		r.Fail(fmt.Errorf("%s: %d cells where this configuration has %d", what, len(xs), len(dst)))
	case slices.ContainsFunc(xs, func(x int64) bool { return x < 0 }):
		r.Fail(fmt.Errorf("%s: a negative count", what))
	default:
		copy(dst, xs)
	}
}

// readTally reads a tally written by appendBinary into a fresh tally of
// the runner, refusing any other layout (a state of another
// configuration, or a damaged one), with at most budget bytes.
func (rn *runner) readTally(payload []byte, budget int64) (*tally, error) {
	r := binenc.NewReader(payload, budget)
	t := rn.newTally()
	sc := make([]int64, 6)
	readCounts(r, "summary", sc)
	t.accepted, t.examined, t.emitted, t.emitSq, t.invalid, t.fitN = sc[0], sc[1], sc[2], sc[3], sc[4], sc[5]
	if n := r.Count(10); r.Err() == nil && n != 0 && n != len(t.fit) {
		r.Fail(fmt.Errorf("%d fits where this configuration has %d candidates", n, len(t.fit)))
	} else if n > 0 {
		t.fitSum = make([]stattest.ExactSum, n)
		for i := range t.fitSum {
			stattest.ReadExactSum(r, &t.fitSum[i])
		}
	}
	if n := r.Count(3); r.Err() == nil && n != len(t.kinds) {
		r.Fail(fmt.Errorf("%d row kinds where this configuration has %d", n, len(t.kinds)))
	}
	for k := range t.kinds {
		c := make([]int64, 3)
		readCounts(r, "row kind counts", c)
		t.kinds[k].n, t.kinds[k].invalid, t.kinds[k].emitted = c[0], c[1], c[2]
	}
	t.readFamilies(r)
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(fmt.Errorf("%d bytes after the tallies", r.Len()))
	}
	if err := r.Err(); err != nil {
		return nil, diag.Usage(fmt.Errorf("check: state: %w; give the states of one run with that run's flags (or run the shard again)", err))
	}
	return t, nil
}
