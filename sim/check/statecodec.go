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
// rule, source, the configuration's fingerprint), the merged tally, and
// the SHA-256 of everything before it.
const (
	stateMagic   = "specsim check state\x00"
	stateVersion = 1
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
	b = s.tot.appendBinary(b)
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
		return bad(errors.New("not a check state (no header); give a file written by simulate check --state-out"))
	}
	body := b[:len(b)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[len(body):]) {
		return bad(errors.New("its checksum does not match: the file is damaged or truncated; run the shard again"))
	}
	r := binenc.NewReader(body[len(stateMagic):], budget)
	if v := r.Uvarint(); r.Err() == nil && v != stateVersion {
		return bad(fmt.Errorf("format revision %d, but this build reads revision %d; merge with the build that wrote it or run the shard again", v, stateVersion))
	}
	s := &State{}
	s.readHeader(r)
	s.tot = readTally(r)
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(fmt.Errorf("%d bytes after the tallies", r.Len()))
	}
	if err := r.Err(); err != nil {
		return bad(err)
	}
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
}

// appendPIT appends PIT counts (a flag, then each table).
func appendPIT(b []byte, c *pitCounts) []byte {
	if c == nil {
		return binenc.AppendVarint(b, 0)
	}
	b = binenc.AppendVarint(b, 1)
	for _, x := range [][]int64{c.pos, c.pair, c.block, c.cross} {
		b = binenc.AppendInts(b, x)
	}
	return b
}

// appendLaw appends a law-test sum (a flag, its cells, the sum).
func appendLaw(b []byte, h *stattest.HeteroSum) []byte {
	if h == nil {
		return binenc.AppendVarint(b, 0)
	}
	b = binenc.AppendVarint(b, 1)
	b = binenc.AppendVarint(b, int64(h.K()))
	return h.AppendBinary(b)
}

// appendBinary appends a merged tally's counts and exact sums.
func (t *tally) appendBinary(b []byte) []byte {
	b = binenc.AppendInts(b, t.pos)
	b = binenc.AppendInts(b, t.joint)
	b = appendPIT(b, t.pit)
	b = binenc.AppendInts(b, []int64{t.accepted, t.examined, t.emitted, t.emitSq, t.invalid, t.fitN})
	b = binenc.AppendUvarint(b, uint64(len(t.fitSum)))
	for i := range t.fitSum {
		b = t.fitSum[i].AppendBinary(b)
	}
	b = appendLaw(b, t.law)
	b = binenc.AppendUvarint(b, uint64(len(t.kinds)))
	for _, k := range t.kinds {
		b = appendPIT(b, k.pit)
		b = appendLaw(b, k.law)
		b = binenc.AppendInts(b, []int64{k.n, k.invalid, k.emitted})
	}
	return b
}

// counts reads a slice of counts, refusing negative ones.
func counts(r *binenc.Reader) []int64 {
	xs := r.Ints()
	if slices.ContainsFunc(xs, func(x int64) bool { return x < 0 }) {
		r.Fail(errors.New("a negative count (a damaged file)"))
	}
	return xs
}

// readPIT reads PIT counts written by appendPIT.
func readPIT(r *binenc.Reader) *pitCounts {
	if r.Int("PIT flag", 0, 1) == 0 {
		return nil
	}
	return &pitCounts{pos: counts(r), pair: counts(r), block: counts(r), cross: counts(r)}
}

// readLaw reads a law-test sum written by appendLaw.
func readLaw(r *binenc.Reader) *stattest.HeteroSum {
	if r.Int("law flag", 0, 1) == 0 {
		return nil
	}
	k := int(r.Int("law cells", 1, (sim.MaxGamma+1)*maxLawTestBins+2))
	if r.Err() != nil {
		return nil
	}
	return stattest.ReadHeteroSum(r, k)
}

// readTally reads a tally written by appendBinary; its layout is checked
// against a run's by checkTally.
func readTally(r *binenc.Reader) *tally {
	t := &tally{pos: counts(r), joint: counts(r), pit: readPIT(r)}
	sc := counts(r)
	if r.Err() == nil && len(sc) != 6 {
		r.Fail(errors.New("malformed summary counts"))
	}
	if r.Err() != nil {
		return nil
	}
	t.accepted, t.examined, t.emitted, t.emitSq, t.invalid, t.fitN = sc[0], sc[1], sc[2], sc[3], sc[4], sc[5]
	t.fitSum = make([]stattest.ExactSum, r.Count(10))
	for i := range t.fitSum {
		stattest.ReadExactSum(r, &t.fitSum[i])
	}
	t.law = readLaw(r)
	t.kinds = make([]kindTally, r.Count(3))
	for k := range t.kinds {
		kt := &t.kinds[k]
		kt.pit, kt.law = readPIT(r), readLaw(r)
		if c := counts(r); len(c) == 3 {
			kt.n, kt.invalid, kt.emitted = c[0], c[1], c[2]
		} else {
			r.Fail(errors.New("malformed row-kind counts"))
		}
	}
	if len(t.kinds) == 0 {
		t.kinds = nil
	}
	return t
}
