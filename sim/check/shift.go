package check

import (
	"fmt"

	"github.com/specsim/specsim/internal/binenc"
	"github.com/specsim/specsim/sim/stattest"
)

// The shift family ranks after the PIT's.
func init() {
	registerFamily(30, func(rn *runner) Family {
		if !rn.marg || rn.shift.half <= 0 {
			return nil
		}
		return &shiftFamily{l: rn.shift, c: rn.shift.newCounts()}
	})
}

// The rows-half-a-batch-apart tests (issue 28, item 3). The rows-of-a-
// batch tests of pit.go pair rows 2k and 2k+1; a sampler that reuses one
// half of the batch's uniforms for the other half couples rows j and
// j+h (h = ⌊B/2⌋) and leaves adjacent rows independent, so they never
// saw it (0 of 3 at batch 16 over 1,024 contexts). These tests pair row j
// with row j+h for j < h: h disjoint pairs per batch, independent under
// the null, so each pair is one observation of a contingency table of
// the two rows' PIT pair (token-index order) against the product of its
// own margins, as for adjacent rows: of the first emitted tokens (n =
// batches·h) and of every position (n = batches·h·(γ+1)). They run beside
// the adjacent-row tests, each its own test under Holm, so the adjacent
// pairing keeps its power (a random matching of rows had lost 63× of it
// against the adjacent-pair plant) and a half-batch reuse shows here.
// With B < 4 the half shift pairs adjacent rows only, and the tests are
// left out.

// shiftLayout is the layout of the half-shift tests: h the shift (0: no
// tests), g1 the positions, pb the bins per axis (the PIT pair grid's).
type shiftLayout struct {
	half, batch, g1, pb int
}

// newShiftLayout returns the layout of a check with batch B and γ+1 = g1
// positions on pb×pb grids; on (the cross-row tests requested) and B ≥ 4.
func newShiftLayout(on bool, batch, g1, pb int) shiftLayout {
	if !on || batch < 4 {
		return shiftLayout{}
	}
	return shiftLayout{half: batch / 2, batch: batch, g1: g1, pb: pb}
}

// shiftCounts accumulates the half-shift tests of one chunk: cells holds
// the every-position table then the first tokens' (pb×pb each); buf and
// at are working storage, not merged or serialised: buf[j] holds row j's
// transforms (token-index order) of trial at[j].
type shiftCounts struct {
	cells []int64
	buf   []float64
	at    []int64
}

func (l shiftLayout) newCounts() *shiftCounts {
	c := &shiftCounts{cells: make([]int64, 2*l.pb*l.pb), buf: make([]float64, l.half*l.g1), at: make([]int64, l.half)}
	for j := range c.at {
		c.at[j] = -1
	}
	return c
}

// record counts row j of its batch (trial trial, transforms u in
// token-index order): a row of the first half is kept, and a row j ≥ h
// is paired with row j-h of the same batch when that was recorded.
func (l shiftLayout) record(c *shiftCounts, j int, trial int64, u []float64) {
	switch {
	case j < l.half:
		copy(c.buf[j*l.g1:(j+1)*l.g1], u)
		c.at[j] = trial
	case j < 2*l.half && c.at[j-l.half] == trial-int64(l.half):
		a := c.buf[(j-l.half)*l.g1 : (j-l.half+1)*l.g1]
		b2 := l.pb * l.pb
		for i := range l.g1 {
			cell := bin(a[i], l.pb)*l.pb + bin(u[i], l.pb)
			c.cells[cell]++
			if i == 0 {
				c.cells[b2+cell]++
			}
		}
	}
}

func (c *shiftCounts) merge(o *shiftCounts) {
	for i, v := range o.cells {
		c.cells[i] += v
	}
}

// shiftFamily is the half-shift tests' family: pooled only (a pair spans
// two row kinds), its state the counts of the two tables.
type shiftFamily struct {
	l shiftLayout
	c *shiftCounts
}

func (f *shiftFamily) name() string  { return "shift" }
func (f *shiftFamily) byKind() bool  { return false }
func (f *shiftFamily) emitted() bool { return true }

// add counts the round's row, its transforms in token-index order.
func (f *shiftFamily) add(o *roundObs) {
	f.l.record(f.c, int(o.r.Trial-o.r.Unit*int64(f.l.batch)), o.r.Trial, o.u[byIdx])
}

func (f *shiftFamily) merge(src Family) error {
	f.c.merge(src.(*shiftFamily).c)
	return nil
}

// appendBinary writes the counts (not the working storage).
func (f *shiftFamily) appendBinary(b []byte) []byte { return binenc.AppendInts(b, f.c.cells) }

func (f *shiftFamily) readBinary(r *binenc.Reader) {
	readCounts(r, "half-shift table", f.c.cells)
}

// tests yields the two half-shift tests of every trial; a row kind has
// none.
func (f *shiftFamily) tests(kind int) ([]Pending, error) {
	if kind >= 0 {
		return nil, nil
	}
	return f.l.tests(f.c), nil
}

// tests returns the two half-shift tests.
func (l shiftLayout) tests(c *shiftCounts) []Pending {
	return rowPairTests(fmt.Sprintf("rows j and j+%d of a batch of %d, j < %d", l.half, l.batch, l.half),
		"rows half a batch apart", c.cells, l.pb)
}

// rowPairTests are the independence tests of the PIT pairs of two rows of
// a batch paired as pairing says: cells holds the every-position table
// then the first tokens' (pb×pb each), name the tests' name.
func rowPairTests(pairing, name string, cells []int64, pb int) []Pending {
	b2 := pb * pb
	var out []Pending
	for _, t := range []struct {
		what, quantity string
		obs            []int64
	}{
		{"first tokens", "their first emitted tokens (n = pairs)", cells[b2:]},
		{"every position", "their emitted tokens at the same position, every position's pair counted (n = pairs·(γ+1))", cells[:b2]},
	} {
		what := t.what
		out = append(out, Pending{name: name + " (independence, " + what + ")",
			quantity: fmt.Sprintf("TV between the joint law of two rows of one batch (%s) at %s (their PIT pair) and the product of its margins, on a %d×%d grid (adjacent bins merged while an expected count is below 5)",
				pairing, t.quantity, pb, pb),
			table: stattest.Independence{Obs: t.obs, Rows: pb, Cols: pb}, independence: true,
			cell: func(_, c int) string {
				return fmt.Sprintf("%s, %s, PIT bins (%d, %d) of %d in token-index order", pairing, what, c/pb+1, c%pb+1, pb)
			}})
	}
	return out
}
