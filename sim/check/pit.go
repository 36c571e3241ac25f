package check

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/specsim/specsim/internal/binenc"

	"github.com/specsim/specsim/sim"
)

// The PIT family ranks after the pool's or pair's.
func init() {
	registerFamily(20, func(rn *runner) Family {
		if !rn.marg {
			return nil
		}
		return &pitFamily{l: &rn.pit, c: rn.pit.newCounts()}
	})
}

// The PIT tests see the whole emitted law, for any source.
//
// Every emitted token y_i (positions i = 1..γ+1, the target's continuation
// included) is mapped to its randomised probability integral transform
// under its exact conditional target law given the emitted prefix, in a
// fixed order of the tokens:
//
//	U_i = Σ_{t ≺ y_i} p_i(t | y_<i) + V_i·p_i(y_i | y_<i),  V_i ~ U(0, 1).
//
// The emitted block has the target's law exactly when U_1, ..., U_{γ+1}
// are independent and uniform on [0, 1) (Rosenblatt 1952, "Remarks on a
// multivariate transformation", Ann. Math. Statist. 23(3); Brockwell 2007,
// "Universal residuals", Biometrika 94(3)): each U_i is uniform given the
// prefix exactly when y_i has its target law given the prefix, and then
// it is independent of the prefix. The tests bin the U's, so every cell
// has probability exactly 1/cells under the null and no pooling or law
// evaluation is needed:
//
//   - per position, U_i in decreasing-p order and in token-index order, in
//     B equal bins: the binned law of each position given its prefix, seen
//     along two orders so that a move of mass between tokens adjacent in
//     one order shows in the other (the ratio-binned tests order by p/q);
//   - every pair of positions, (U_i, U_j) in token-index order on a b×b
//     grid: dependence with exact marginals (a sampler that reuses one
//     uniform for two positions inverts the CDF in index order, so
//     U_i ≈ U_j);
//   - the whole block (U_1, ..., U_{γ+1}) in index order on a c^(γ+1) grid;
//   - with CrossRow, U_1 of rows 2k and 2k+1 of a batch on a b×b grid:
//     rows of one batch must be independent (shared uniforms across rows
//     keep each row's law exact and make U_1 agree); and rows j and j+⌊B/2⌋
//     (shift.go).
//
// The tests in re-drawn cells (hashed.go) take each transform in a random
// token order within the cell of its context and prefix, so that no fixed
// arrangement of mass can hide inside the bins.
//
// V_i is a keyed hash of (seed, trial, position), not a draw from any of
// the round's streams, so adding the tests changes no other number.

// pitFamily is the PIT tests' family: one state of pitCounts, kept per
// row kind (the pooled counts are their sum). It adds a round's
// transforms (roundObs.u), and with CrossRow the pair of rows 2k and
// 2k+1 of a unit; its tests are pitLayout.tests (a row kind's without
// the cross-row tests, whose pairs span two kinds). The groups of tests
// stay one family and one file: their counts are filled from the same
// transforms in one pass.
type pitFamily struct {
	l *pitLayout
	c *pitCounts
}

func (f *pitFamily) name() string { return PITFamily }

// PITFamily names the family of the PIT tests (Test.Family): each
// position given its prefix in two orders, the pairs and the block, at a
// fixed grid of equal-mass bins.
const PITFamily = "pit"

func (f *pitFamily) byKind() bool  { return true }
func (f *pitFamily) emitted() bool { return true }

// add counts the round's transforms, and the cross-row pair.
func (f *pitFamily) add(o *roundObs) {
	f.l.add(f.c, o.u)
	if o.pairPrev {
		for i := range o.prevU {
			f.l.addCross(f.c, i, o.prevU[i], o.u[byIdx][i])
		}
	}
}

func (f *pitFamily) merge(src Family) error {
	f.c.merge(src.(*pitFamily).c)
	return nil
}

func (f *pitFamily) appendBinary(b []byte) []byte {
	for _, x := range [][]int64{f.c.pos, f.c.pair, f.c.block, f.c.cross} {
		b = binenc.AppendInts(b, x)
	}
	return b
}

func (f *pitFamily) readBinary(r *binenc.Reader) {
	for _, x := range [][]int64{f.c.pos, f.c.pair, f.c.block, f.c.cross} {
		readCounts(r, "PIT table", x)
	}
}

// tests yields the PIT tests; a row kind's leave out the cross-row ones.
func (f *pitFamily) tests(kind int) ([]Pending, error) {
	pt, err := f.l.tests(f.c)
	if err != nil {
		return nil, err
	}
	var out []Pending
	for _, p := range pt {
		if kind < 0 || !p.independence {
			out = append(out, p)
		}
	}
	return out, nil
}

// pitOrders are the token orders of the per-position PIT tests.
const (
	byP   = 0 // decreasing target probability, ties by index
	byIdx = 1 // token index
)

// Limits of the PIT grids.
const (
	pitMaxBins  = 256 // per-position bins B
	pitMaxPair  = 16  // pair bins per axis b
	pitMaxBlock = 4   // block bins per axis c
)

// pitLayout fixes the grids of one check's PIT tests.
type pitLayout struct {
	g1    int // positions γ+1
	bins  int // B
	pb    int // b
	cb    int // c (0: no block test)
	cross bool
	seed  uint64
}

// newPITLayout sizes the grids so that every cell expects at least
// minPerBin of the n trials: B = n/minPerBin (at most pitMaxBins), b the
// largest with b² cells, c the largest with c^(γ+1) cells (at least 2;
// the block test is left out when even 2^(γ+1) cells are too many).
func newPITLayout(g int, n int64, seed uint64, cross bool) pitLayout {
	l := pitLayout{g1: g + 1, seed: seed, cross: cross}
	cells := max(n/minPerBin, 1)
	l.bins = int(min(max(cells, 2), pitMaxBins))
	l.pb = 2
	for int64((l.pb+1)*(l.pb+1)) <= cells && l.pb < pitMaxPair {
		l.pb++
	}
	for c := 2; c <= pitMaxBlock && int64(pow(c, l.g1)) <= cells && pow(c, l.g1) <= maxJointCells; c++ {
		l.cb = c
	}
	return l
}

func (l pitLayout) pairs() int { return l.g1 * (l.g1 - 1) / 2 }

// pitCounts are one chunk's PIT histograms.
type pitCounts struct {
	pos   []int64 // [order][i][B]
	pair  []int64 // [pair][b·b]
	block []int64 // [c^(γ+1)]
	cross []int64 // [b·b]
}

func (l pitLayout) newCounts() *pitCounts {
	c := &pitCounts{pos: make([]int64, 2*l.g1*l.bins), pair: make([]int64, l.pairs()*l.pb*l.pb)}
	if l.cb > 0 {
		c.block = make([]int64, pow(l.cb, l.g1))
	}
	if l.cross {
		// two b×b tables: every position's pairs, then the first tokens'
		c.cross = make([]int64, 2*l.pb*l.pb)
	}
	return c
}

func (c *pitCounts) merge(o *pitCounts) {
	for _, d := range [][2][]int64{{c.pos, o.pos}, {c.pair, o.pair}, {c.block, o.block}, {c.cross, o.cross}} {
		for i, v := range d[1] {
			d[0][i] += v
		}
	}
}

// bin returns the bin of u among k equal bins of [0, 1).
func bin(u float64, k int) int { return min(int(u*float64(k)), k-1) }

// add counts one trial's transforms u[order][i].
func (l pitLayout) add(c *pitCounts, u *[2][]float64) {
	for o := range 2 {
		for i, x := range u[o] {
			c.pos[(o*l.g1+i)*l.bins+bin(x, l.bins)]++
		}
	}
	ux := u[byIdx]
	k := 0
	for i := 0; i < l.g1; i++ {
		for j := i + 1; j < l.g1; j++ {
			c.pair[k*l.pb*l.pb+bin(ux[i], l.pb)*l.pb+bin(ux[j], l.pb)]++
			k++
		}
	}
	if l.cb > 0 {
		code := 0
		for _, x := range ux {
			code = code*l.cb + bin(x, l.cb)
		}
		c.block[code]++
	}
}

// addCross counts the transforms at position i of two rows of a batch:
// into the every-position table, and into the first tokens' table at
// i = 0.
func (l pitLayout) addCross(c *pitCounts, i int, a, b float64) {
	cell := bin(a, l.pb)*l.pb + bin(b, l.pb)
	c.cross[cell]++
	if i == 0 {
		c.cross[l.pb*l.pb+cell]++
	}
}

// uniform returns k equal probabilities.
func uniform(k int) []float64 {
	p := make([]float64, k)
	for i := range p {
		p[i] = 1 / float64(k)
	}
	return p
}

// tests returns the PIT tests of the merged counts.
func (l pitLayout) tests(c *pitCounts) ([]Pending, error) {
	var out []Pending
	add := func(name, quantity string, obs []int64, cell func(int) string) error {
		pt, err := UniformTest(name, quantity, obs)
		if err != nil {
			return err
		}
		pt.cell = func(_, c int) string { return cell(c) }
		out = append(out, pt)
		return nil
	}
	orders := [2]string{"decreasing p", "token index"}
	for o := range 2 {
		for i := 0; i < l.g1; i++ {
			k := (o*l.g1 + i) * l.bins
			if err := add(fmt.Sprintf("position %d given its prefix, %s order", i+1, orders[o]),
				fmt.Sprintf("TV between the emitted and target law of token %d given the emitted prefix, in %d equal-mass bins of the tokens in %s order", i+1, l.bins, orders[o]),
				c.pos[k:k+l.bins], func(b int) string {
					return fmt.Sprintf("position %d, PIT bin %d of %d in %s order (U in [%.3g, %.3g))", i+1, b+1, l.bins, orders[o], float64(b)/float64(l.bins), float64(b+1)/float64(l.bins))
				}); err != nil {
				return nil, err
			}
		}
	}
	k := 0
	for i := 0; i < l.g1; i++ {
		for j := i + 1; j < l.g1; j++ {
			if err := add(fmt.Sprintf("positions %d and %d jointly", i+1, j+1),
				fmt.Sprintf("TV between the emitted and target joint law of tokens %d and %d given their prefixes (their PIT pair), on a %d×%d grid of equal-mass bins in token-index order", i+1, j+1, l.pb, l.pb),
				c.pair[k*l.pb*l.pb:(k+1)*l.pb*l.pb], func(c int) string {
					return fmt.Sprintf("positions %d and %d, PIT bins (%d, %d) of %d in token-index order", i+1, j+1, c/l.pb+1, c%l.pb+1, l.pb)
				}); err != nil {
				return nil, err
			}
			k++
		}
	}
	if l.cb > 0 {
		if err := add(fmt.Sprintf("positions 1-%d jointly (PIT block)", l.g1),
			fmt.Sprintf("TV between the emitted and target joint law of tokens 1-%d (their PIT vector), on a grid of %d equal-mass bins per position in token-index order", l.g1, l.cb),
			c.block, func(code int) string {
				return fmt.Sprintf("positions 1-%d, PIT bins %s of %d in token-index order", l.g1, digits(code, l.cb, l.g1, 1), l.cb)
			}); err != nil {
			return nil, err
		}
	}
	if l.cross {
		out = append(out, l.crossTests(c)...)
	}
	return out, nil
}

// crossTests are the tests that two rows of a batch unit (rows 2k and
// 2k+1) are independent: of their first emitted tokens, and of their
// tokens at every position (each position's pair counted once), each an
// independence test of the PIT pair against the product of its own
// margins, so a row's wrong marginal law, which the other tests see,
// never makes them reject.
func (l pitLayout) crossTests(c *pitCounts) []Pending {
	return rowPairTests("rows 2k and 2k+1", "rows of a batch", c.cross, l.pb)
}

// pitV is the PIT's randomisation V of position i of trial t: a keyed hash
// mapped to [0, 1).
func (l pitLayout) pitV(t int64, i int) float64 {
	return float64(sim.StreamID("check/pit", l.seed, uint64(t), uint64(i))>>11) * 0x1p-53
}

// pitRow computes the PIT of token y under row p in both orders (O(V)).
func pitRow(p []float64, y int, v float64) (byPU, idxU float64) {
	py := p[y]
	before, above := 0.0, 0.0
	for t, x := range p {
		if t < y {
			before += x
		}
		if x > py || (x == py && t < y) {
			above += x
		}
	}
	return clamp01(above + v*py), clamp01(before + v*py)
}

func clamp01(u float64) float64 { return min(max(u, 0), math.Nextafter(1, 0)) }

// pitTable holds, for one pool row, the target mass before each token in
// both orders, so a pool's transforms cost O(1) per token. It keeps them
// in float32 (the pool's own precision): a transform is off by at most
// about 6e-8, far below any bin's width.
type pitTable struct {
	before [2][]float32
	p      []float32
}

// newPITTable32 builds the table of row p.
func newPITTable32(p []float64) pitTable {
	v := len(p)
	tb := pitTable{p: make([]float32, v), before: [2][]float32{make([]float32, v), make([]float32, v)}}
	s := 0.0
	for t, x := range p {
		tb.p[t] = float32(x)
		tb.before[byIdx][t] = float32(s)
		s += x
	}
	// the tokens by p descending, then by index: the masses sorted with
	// their tokens, not through them (at V = 4,194,304 the indirect
	// comparisons' cache misses made this sort over a second, one stretch
	// SIGINT waits for)
	type keyed struct {
		p float64
		t int32
	}
	order := make([]keyed, v)
	for t, x := range p {
		order[t] = keyed{x, int32(t)}
	}
	slices.SortFunc(order, func(a, b keyed) int {
		if c := cmp.Compare(b.p, a.p); c != 0 {
			return c
		}
		return cmp.Compare(a.t, b.t)
	})
	s = 0
	for _, o := range order {
		tb.before[byP][o.t] = float32(s)
		s += o.p
	}
	return tb
}

// pit returns the transforms of token y in both orders.
func (tb *pitTable) pit(y int, v float64) (byPU, idxU float64) {
	py := float64(tb.p[y])
	return clamp01(float64(tb.before[byP][y]) + v*py), clamp01(float64(tb.before[byIdx][y]) + v*py)
}

// profile returns, per position, the observed and expected share of the
// PIT in token-index order in ProfileBins bins (coarsened from the
// per-position histograms; ProfileBins divides their bins or they are
// merged proportionally by bin index).
func (l pitLayout) profile(c *pitCounts) []PositionProfile {
	var out []PositionProfile
	for i := 0; i < l.g1; i++ {
		k := (byIdx*l.g1 + i) * l.bins
		h := c.pos[k : k+l.bins]
		pp := PositionProfile{Position: i + 1, Observed: make([]float64, ProfileBins), Expected: make([]float64, ProfileBins)}
		for b, n := range h {
			pp.Observed[b*ProfileBins/l.bins] += float64(n)
			pp.Expected[b*ProfileBins/l.bins] += 1 / float64(l.bins)
			pp.N += n
		}
		for b := range pp.Observed {
			if pp.N > 0 {
				pp.Observed[b] /= float64(pp.N)
			}
		}
		out = append(out, pp)
	}
	return out
}
