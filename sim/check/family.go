package check

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/specsim/specsim/internal/binenc"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
)

// Family is one family of a check's tests, one file each: the law or
// conformance test (law.go), and the tests of the emitted tokens. A
// family's state accumulates the rounds of a chunk (add, handed the
// recorder's view of each round), merges with another state of the same
// configuration (merge: a chunk into a run's total, or a shard's total
// into a merged run's; sums of floating-point moments are exact, so the
// grouping does not matter), serialises itself (appendBinary and
// readBinary: its section of State.MarshalBinary) and yields its Pending
// tests (tests), which the one assembly, finish, corrects for
// multiplicity. A family kept per row kind (byKind) has a state per
// kind of Config.RowKinds, and its pooled state is their merge.
//
// Adding a family: one file with its state type implementing Family and
// an init registering its constructor (registerFamily); docs/extending.md
// says what else changes.
type Family interface {
	// name names the family's section in a state's payload.
	name() string
	// byKind reports whether the state is kept per row kind.
	byKind() bool
	// emitted reports whether add needs the round's emitted tokens and
	// their transforms (roundObs.seq, .u): it is then called after they
	// are computed, else before.
	emitted() bool
	add(o *roundObs)
	merge(src Family) error
	appendBinary(b []byte) []byte
	readBinary(r *binenc.Reader)
	// tests yields the pending tests of every trial (kind -1) or of row
	// kind kind's (the state then is that kind's, for byKind families).
	tests(kind int) ([]Pending, error)
}

// roundObs is the recorder's view of one round, what the families count.
type roundObs struct {
	r  *run.Round
	sc *scratch
	// c is the round's pool context (0 on a pair), kind its row kind.
	c, kind int
	// chain rounds: the block and its (checked) outcome.
	b *sim.Block
	o sim.Outcome
	// tree rounds: the tree, the outcome's node, its depth and the next
	// token.
	tree        *sim.Tree
	node, depth int
	next        int
	// seq is the γ+1 tokens (the emitted ones, then the target's
	// continuation) and u their PIT transforms by order, both set before
	// the emitted families' add; pairPrev says that the previous round
	// was row 2k of this unit (this one row 2k+1), with transforms prevU.
	seq      []int
	u        *[2][]float64
	pairPrev bool
	prevU    []float64
}

// familyMaker makes an empty state of one of the runner's families.
type familyMaker func() Family

// familyCtor makes an empty state of a family for runner rn, or nil when
// the family does not apply to rn's check.
type familyCtor func(rn *runner) Family

// familyEntry is one registered family: its constructor and its rank.
type familyEntry struct {
	rank int
	mk   familyCtor
}

// familyRegistry holds the registered families, registerFamily's.
var familyRegistry []familyEntry

// registerFamily registers a family's constructor, called from the init
// of the family's file: its tests are reported in increasing rank (two
// families that may apply to one check need distinct ranks).
func registerFamily(rank int, mk familyCtor) {
	familyRegistry = append(familyRegistry, familyEntry{rank, mk})
}

// families returns the makers of the registered families that apply to
// the runner's check, in increasing rank: the order their tests are
// reported and their sections are written in a state.
func (rn *runner) families() []familyMaker {
	reg := slices.Clone(familyRegistry)
	slices.SortStableFunc(reg, func(a, b familyEntry) int { return cmp.Compare(a.rank, b.rank) })
	var out []familyMaker
	for _, e := range reg {
		if e.mk(rn) != nil {
			out = append(out, func() Family { return e.mk(rn) })
		}
	}
	return out
}

// familyNames returns the names of the runner's families, in their
// order: the list a state's header records (State.fams).
func (rn *runner) familyNames() []string {
	names := make([]string, len(rn.fams))
	for i, mk := range rn.fams {
		names[i] = mk().name()
	}
	return names
}

// familyDiff says how a state's family list have differs from a
// runner's want (nil when they are equal): the families it lacks, those
// it has in excess, or else that their order differs.
func familyDiff(have, want []string) error {
	if slices.Equal(have, want) {
		return nil
	}
	var missing, extra []string
	for _, n := range want {
		if !slices.Contains(have, n) {
			missing = append(missing, n)
		}
	}
	for _, n := range have {
		if !slices.Contains(want, n) {
			extra = append(extra, n)
		}
	}
	what := "its families are in another order"
	switch {
	case len(missing) > 0 && len(extra) > 0:
		what = fmt.Sprintf("it lacks families %q and has families %q this build does not", missing, extra)
	case len(missing) > 0:
		what = fmt.Sprintf("it lacks families %q", missing)
	case len(extra) > 0:
		what = fmt.Sprintf("it has families %q this build does not", extra)
	}
	return fmt.Errorf("written with families %q where this build's check has %q (%s); merge with the build that wrote it or run the shard again", have, want, what)
}

// newFamilies returns empty states of the runner's families.
func (rn *runner) newFamilies() []Family {
	fs := make([]Family, len(rn.fams))
	for i, mk := range rn.fams {
		fs[i] = mk()
	}
	return fs
}

// fam returns family i's state that round counts go to: the current
// kind's for a family kept per row kind.
func (t *tally) fam(i int) Family {
	if t.kinds != nil && t.fams[i].byKind() {
		return t.kinds[t.kind].fams[i]
	}
	return t.fams[i]
}

// addFamilies hands o to the families whose stage is emitted.
func (t *tally) addFamilies(o *roundObs, emitted bool) {
	for i := range t.fams {
		if f := t.fam(i); f.emitted() == emitted {
			f.add(o)
		}
	}
}

// mergeFamilies merges src's family states into dst's.
func mergeFamilies(dst, src *tally) error {
	var err error
	for i, f := range dst.fams {
		if dst.kinds != nil && f.byKind() {
			for k := range dst.kinds {
				err = cmp.Or(err, dst.kinds[k].fams[i].merge(src.kinds[k].fams[i]))
			}
			continue
		}
		err = cmp.Or(err, f.merge(src.fams[i]))
	}
	return err
}

// poolFamilies sets a merged tally's pooled state of every family kept
// per row kind to the merge of its kinds'.
func (rn *runner) poolFamilies(t *tally) error {
	if t.kinds == nil {
		return nil
	}
	var err error
	for i, f := range t.fams {
		if !f.byKind() {
			continue
		}
		t.fams[i] = rn.fams[i]()
		for k := range t.kinds {
			err = cmp.Or(err, t.fams[i].merge(t.kinds[k].fams[i]))
		}
	}
	return err
}

// pitCounts returns the merged tally's pooled PIT counts (nil without
// the PIT family), for the profile.
func (t *tally) pitCounts() *pitCounts {
	for _, f := range t.fams {
		if p, ok := f.(*pitFamily); ok {
			return p.c
		}
	}
	return nil
}

// familyTests returns every family's pending tests of kind (-1: every
// trial), in the families' order.
func (t *tally) familyTests(kind int) ([]Pending, error) {
	var out []Pending
	for i, f := range t.fams {
		if kind >= 0 && f.byKind() {
			f = t.kinds[kind].fams[i]
		}
		ps, err := f.tests(kind)
		if err != nil {
			return nil, err
		}
		for j := range ps {
			ps[j].family = f.name()
		}
		out = append(out, ps...)
	}
	return out, nil
}

// appendFamilies appends every family's section: its name, its state,
// then its per-kind states.
func (t *tally) appendFamilies(b []byte) []byte {
	for i, f := range t.fams {
		b = binenc.AppendBytes(b, []byte(f.name()))
		b = f.appendBinary(b)
		if t.kinds != nil && f.byKind() {
			for k := range t.kinds {
				b = t.kinds[k].fams[i].appendBinary(b)
			}
		}
	}
	return b
}

// readFamilies reads the sections appendFamilies wrote into t's fresh
// family states, refusing a section of another family.
func (t *tally) readFamilies(r *binenc.Reader) {
	for i, f := range t.fams {
		if name := string(r.Bytes()); r.Err() == nil && name != f.name() {
			r.Fail(fmt.Errorf("the state holds family %q where this configuration has %q", name, f.name()))
		}
		f.readBinary(r)
		if t.kinds != nil && f.byKind() {
			for k := range t.kinds {
				t.kinds[k].fams[i].readBinary(r)
			}
		}
	}
}

// cells is the state of the binned families (poolbins.go, pairstates.go):
// the per-position counts and the joint ones.
type cells struct {
	pos, joint []int64
}

func (c *cells) merge(s *cells) {
	for i, v := range s.pos {
		c.pos[i] += v
	}
	for i, v := range s.joint {
		c.joint[i] += v
	}
}

func (c *cells) appendBinary(b []byte) []byte {
	return binenc.AppendInts(binenc.AppendInts(b, c.pos), c.joint)
}

func (c *cells) readBinary(r *binenc.Reader) {
	readCounts(r, "position cells", c.pos)
	readCounts(r, "joint cells", c.joint)
}

// FamilyName is a test's family (Test.Family), JSON null when empty.
type FamilyName string

// MarshalJSON writes the name, or null for none.
func (n FamilyName) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(n))
}

// UnmarshalJSON reads a name or null.
func (n *FamilyName) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a test's family: %w", err)
	}
	*n = ""
	if s != nil {
		*n = FamilyName(*s)
	}
	return nil
}

// FamilyMinTV returns the smallest minimum detectable TV among r's tests
// of family name and that test's name; ok is false when r has none.
func (r Result) FamilyMinTV(name string) (tv float64, test string, ok bool) {
	for _, t := range r.Tests {
		if string(t.Family) == name && (!ok || t.MinDetTV < tv) {
			tv, test, ok = t.MinDetTV, t.Name, true
		}
	}
	return tv, test, ok
}
