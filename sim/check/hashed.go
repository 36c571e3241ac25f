package check

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/specsim/specsim/internal/binenc"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
)

// The hashed family ranks after the shift's.
func init() {
	registerFamily(40, func(rn *runner) Family {
		if !rn.marg {
			return nil
		}
		return &hashedFamily{l: &rn.hashed, c: rn.hashed.newCounts(), batch: rn.cfg.Batch}
	})
}

// The prefix tests in re-drawn cells (issue 28, item 2): consistent tests
// of the whole emitted block.
//
// The PIT tests of pit.go bin the transforms in fixed token orders and
// pool every context into one table, so a dependence whose halves
// interleave inside bins and whose signs cancel across contexts stays
// hidden at every size (position 2 preferring the parity of an accepted
// first token on V = 1,000: 0 detections at 200k trials). Here, for
// every position i, the transform of y_i is taken in a random order of the
// tokens,
//
//	U^σ_i = Σ_{σ(t) < σ(y_i)} p_i(t | c, y_<i) + V_i·p_i(y_i | c, y_<i),
//
// and binned into B_i equal bins within the cell of its context and
// emitted prefix (c, y_<i): the cell is (c, y_<i) itself where those are
// few (at most half the cells an epoch fills), else a keyed hash of it
// into L_i labels. The order σ and the hash are drawn anew for every
// epoch of E consecutive trials, keyed by the master seed and the epoch
// (so the counts are the same for any worker count), and every (epoch,
// cell) is a group of one table. Under the hypothesis U^σ_i is uniform and
// independent of (c, y_<i) for any order fixed before the trial
// (Rosenblatt 1952), so every group's B_i counts are uniform multinomial:
// the test is exact, of any source, trees and external samplers included.
// The block has the target's law exactly when every y_i has its target law
// given (c, y_<i); a fixed deviation of that law puts, for a random σ
// and hash, a deviation into the binned cells with positive probability,
// and the epochs are independent draws, so the noncentrality grows in
// proportion to the trials while the degrees of freedom (the epochs' cells)
// grow as fast, and the epochs' number as √trials: any fixed deviation of
// the joint law is detected with probability tending to 1. The stated
// minimum detectable TV is of the mixture: the TV of the binned law of
// U^σ_i given its cell, averaged over the cells and the epochs' draws.
//
// A transform in a random order costs O(V) per token, so the tests count
// every K-th trial, K = AutoLawEvery(γ, V) (the law test's budget of
// about 2,048 row entries per trial); their n says which. On a pool whose
// rows × V is at most hashCacheEntries, each worker instead keeps, per
// epoch, every row's mass before each place of the epoch's order (built
// on the row's first use in the epoch, O(V)), so a token's transform costs
// O(1). That sum runs in the order's sequence rather than the tokens',
// so a transform may differ from the direct sum by rounding (about
// V·2^-53), which moves a bin only for a transform that close to a bin's
// edge.

// Sizes of the prefix tests.
const (
	hashBaseEpoch = 1 << 14 // trials per epoch at least; E = max(this, √(n·this))
	hashMaxCells  = 1 << 16 // cells per epoch and position at most
	hashMaxBins   = 64      // B_i at most
	hashedBins    = 4       // B_i where the cells are hashed labels
	hashPerCell   = 5       // expected count per cell aimed at
	// pool rows × V at most, for the per-epoch masses before each place
	// (8 bytes each per worker: 16 MiB)
	hashCacheEntries = 1 << 21
)

// hashedLayout is the layout of one check's prefix tests.
type hashedLayout struct {
	g1, v, nc int
	// cross adds the rows test: entry g1 of bins, labels, exact and off
	cross   bool
	seed    uint64
	epoch   int64 // trials per epoch
	epochs  int
	every   int64 // the trials counted: those with t mod every = 0
	bins    []int // B_i
	labels  []int // L_i (the cells of an epoch)
	exact   []bool
	off     []int // position i's first cell within an epoch's counts
	size    int   // an epoch's cells
	keyMask uint64
	// cacheRows: the pool rows whose masses before each place are kept
	// per epoch (0: none, each transform sums its row)
	cacheRows int
}

// newHashedLayout sizes the prefix tests of n trials with γ = g over V
// tokens and nc contexts, and with cross the rows test.
func newHashedLayout(g, v, nc int, n int64, seed uint64, cross bool) hashedLayout {
	l := hashedLayout{g1: g + 1, v: v, nc: nc, seed: seed, every: AutoLawEvery(g, v), cross: cross}
	l.epoch = max(hashBaseEpoch, int64(math.Sqrt(float64(n)*hashBaseEpoch)))
	l.epochs = int((max(n, 1) + l.epoch - 1) / l.epoch)
	// k: the cells an epoch's counted trials fill at hashPerCell each (a
	// run shorter than an epoch sizes them by its own trials)
	k := min(max(min(l.epoch, max(n, 1))/l.every/hashPerCell, 2*hashedBins), hashMaxCells)
	d := int64(nc) // the distinct (context, prefix) cells of position i
	for i := range l.g1 + 1 {
		if i == l.g1 {
			if !cross {
				break
			}
			// the other row's context and first token, in cells of the
			// pairs (half the counted trials)
			k = max(k/2, 2*hashedBins)
			d = min(int64(nc)*int64(v), k+1)
		}
		l.off = append(l.off, l.size)
		if d <= k/2 {
			l.labels = append(l.labels, int(d))
			l.bins = append(l.bins, int(min(hashMaxBins, k/d)))
			l.exact = append(l.exact, true)
		} else {
			l.labels = append(l.labels, int(k/hashedBins))
			l.bins = append(l.bins, hashedBins)
			l.exact = append(l.exact, false)
		}
		l.size += l.labels[len(l.labels)-1] * l.bins[len(l.bins)-1]
		d = min(d*int64(v), k+1)
	}
	l.keyMask = 1<<bits.Len(uint(v)) - 1
	return l
}

// hashedCounts accumulates the prefix tests of one chunk: ep[e] the
// counts of epoch e (nil where the chunk has none). keys (the order of
// epoch keyEpoch) and u (a trial's transforms) are working storage, not
// merged or serialised.
type hashedCounts struct {
	ep       [][]int64
	size     int // an epoch's cells
	keys     []uint64
	keyEpoch int64
	u        []float64
	// order: the tokens in epoch rankEpoch's order, rank[t] token t's
	// place there; cum[r] (built in epoch stamp[r]) pool row r's mass
	// before each place
	order     []int32
	rank      []int32
	rankEpoch int64
	cum       [][]float64
	stamp     []int64
	// the previous trial, its context and first token (the rows test)
	prevTrial       int64
	prevCtx, prevTk int
}

func (l *hashedLayout) newCounts() *hashedCounts {
	return &hashedCounts{ep: make([][]int64, l.epochs), size: l.size, keyEpoch: -1, rankEpoch: -1, u: make([]float64, l.g1), prevTrial: -1}
}

// counted reports whether trial t is one the tests count.
func (l *hashedLayout) counted(t int64) bool { return t%l.every == 0 }

// orderKeys returns the keys of epoch e's order of the tokens: token t
// precedes s when its key is smaller (a keyed hash with t in its low
// bits, so no two tokens tie).
func (l *hashedLayout) orderKeys(c *hashedCounts, e int64) []uint64 {
	if c.keyEpoch != e {
		c.keys = c.keys[:0]
		for t := range l.v {
			c.keys = append(c.keys, sim.StreamID("check/hashorder", l.seed, uint64(e), uint64(t))&^l.keyMask|uint64(t))
		}
		c.keyEpoch = e
	}
	return c.keys
}

// hashedPIT keeps the transform of token y at position i of trial t under
// its target row p (given the context and the emitted prefix; pool row
// row, or -1) in the trial's epoch's order, V = v its randomisation.
func hashedPIT[T float32 | float64](l *hashedLayout, c *hashedCounts, i int, t int64, p []T, row, y int, v float64) {
	if c == nil || !l.counted(t) {
		return
	}
	e := t / l.epoch
	var before float64
	if row >= 0 && row < l.cacheRows {
		before = cumRow(l, c, e, row, p)[c.rank[y]]
	} else {
		before = massBefore(l.orderKeys(c, e), p, y)
	}
	c.u[i] = clamp01(before + v*float64(p[y]))
}

// massBefore is the mass of p before token y in the order of keys.
func massBefore[T float32 | float64](keys []uint64, p []T, y int) float64 {
	ky, before := keys[y], 0.0
	keys = keys[:len(p)]
	for s, x := range p {
		// branch-free: the keys' order is random, so a branch on it
		// would be mispredicted half the time
		_, less := bits.Sub64(keys[s], ky, 0) // 1 where keys[s] < ky
		before += float64(less) * float64(x)
	}
	return before
}

// cumRow returns pool row row's (of masses p) mass before each place of
// epoch e's order, built on its first use in the epoch.
func cumRow[T float32 | float64](l *hashedLayout, c *hashedCounts, e int64, row int, p []T) []float64 {
	if c.rankEpoch != e {
		keys := l.orderKeys(c, e)
		if c.order == nil {
			c.order, c.rank = make([]int32, l.v), make([]int32, l.v)
			c.cum, c.stamp = make([][]float64, l.cacheRows), make([]int64, l.cacheRows)
		}
		for t := range c.order {
			c.order[t] = int32(t)
		}
		slices.SortFunc(c.order, func(a, b int32) int { return cmp.Compare(keys[a], keys[b]) })
		for r, t := range c.order {
			c.rank[t] = int32(r)
		}
		c.rankEpoch = e
	}
	cum := c.cum[row]
	if cum == nil || c.stamp[row] != e {
		if cum == nil {
			cum = make([]float64, l.v)
			c.cum[row] = cum
		}
		s := 0.0
		for r, t := range c.order {
			cum[r] = s
			s += float64(p[t])
		}
		c.stamp[row] = e
	}
	return cum
}

// record counts trial t, row j of its batch, in context ctx with emitted
// tokens seq (γ+1 of them, their transforms kept by hashedPIT): every
// position in the cell of its context and prefix, and with cross an odd
// row's first token in the cell of the context and first token of the row
// before it.
func (l *hashedLayout) record(c *hashedCounts, t int64, j, ctx int, seq []int) {
	if c == nil {
		return
	}
	if l.counted(t) {
		l.count(c, t, ctx, seq)
		if l.cross && j%2 == 1 && c.prevTrial == t-1 {
			e, i := t/l.epoch, l.g1
			lab := c.prevCtx*l.v + c.prevTk
			if !l.exact[i] {
				lab = int(sim.StreamID("check/hashrow", l.seed, uint64(e), uint64(c.prevCtx), uint64(c.prevTk)) % uint64(l.labels[i]))
			}
			c.ep[e][l.off[i]+lab*l.bins[i]+bin(c.u[0], l.bins[i])]++
		}
	}
	c.prevTrial, c.prevCtx, c.prevTk = t, ctx, seq[0]
}

// count counts the positions of a counted trial.
func (l *hashedLayout) count(c *hashedCounts, t int64, ctx int, seq []int) {
	e := t / l.epoch
	if c.ep[e] == nil {
		c.ep[e] = make([]int64, l.size)
	}
	code, h := uint64(ctx), sim.StreamID("check/hashcell", l.seed, uint64(e), uint64(ctx))
	for i := range l.g1 {
		lab := int(code)
		if !l.exact[i] {
			lab = int(h % uint64(l.labels[i]))
		}
		c.ep[e][l.off[i]+lab*l.bins[i]+bin(c.u[i], l.bins[i])]++
		if l.exact[i] && i+1 < l.g1 && l.exact[i+1] {
			code = code*uint64(l.v) + uint64(seq[i])
		}
		h = sim.StreamID("check/hashcell", h, uint64(seq[i]))
	}
}

func (c *hashedCounts) merge(o *hashedCounts) {
	for e, s := range o.ep {
		if s == nil {
			continue
		}
		if c.ep[e] == nil {
			c.ep[e] = make([]int64, len(s))
		}
		for i, v := range s {
			c.ep[e][i] += v
		}
	}
}

// hashedFamily is the prefix tests' family: pooled only, its state the
// counts of the epochs its trials fell in.
type hashedFamily struct {
	l     *hashedLayout
	c     *hashedCounts
	batch int
}

func (f *hashedFamily) name() string  { return "hashed" }
func (f *hashedFamily) byKind() bool  { return false }
func (f *hashedFamily) emitted() bool { return true }

// add counts the round (its transforms were kept by hashedPIT).
func (f *hashedFamily) add(o *roundObs) {
	f.l.record(f.c, o.r.Trial, int(o.r.Trial-o.r.Unit*int64(f.batch)), o.c, o.seq)
}

func (f *hashedFamily) merge(src Family) error {
	f.c.merge(src.(*hashedFamily).c)
	return nil
}

// appendBinary writes the counts: per epoch a flag (0: no counts), then
// the epoch's counts where it has any.
func (f *hashedFamily) appendBinary(b []byte) []byte {
	for _, s := range f.c.ep {
		if s == nil {
			b = binenc.AppendUvarint(b, 0)
			continue
		}
		b = binenc.AppendInts(binenc.AppendUvarint(b, 1), s)
	}
	return b
}

// readBinary reads what appendBinary wrote into counts of the same layout
// (an epoch's counts must be its layout's size).
func (f *hashedFamily) readBinary(r *binenc.Reader) {
	for e := range f.c.ep {
		switch flag := r.Uvarint(); {
		case r.Err() != nil:
			return
		case flag == 0:
			f.c.ep[e] = nil
		case flag == 1:
			f.c.ep[e] = make([]int64, f.c.size)
			readCounts(r, fmt.Sprintf("prefix tests' epoch %d", e), f.c.ep[e])
		default:
			r.Fail(fmt.Errorf("prefix tests' epoch %d: flag %d", e, flag))
			return
		}
	}
}

// tests yields the prefix tests of every trial; a row kind has none.
func (f *hashedFamily) tests(kind int) ([]Pending, error) {
	if kind >= 0 {
		return nil, nil
	}
	return f.l.tests(f.c)
}

// tests returns one test per position, and with cross the rows test:
// each table has a group per (epoch, cell) with any counts.
func (l *hashedLayout) tests(c *hashedCounts) ([]Pending, error) {
	var out []Pending
	for i := range l.g1 {
		tb, groups := &stattest.Table{}, [][2]int{}
		probs := uniform(l.bins[i])
		for e, s := range c.ep {
			for lab := range l.labels[i] {
				if s == nil {
					break
				}
				k := l.off[i] + lab*l.bins[i]
				obs := s[k : k+l.bins[i]]
				if sum(obs) == 0 {
					continue
				}
				if err := tb.Add(obs, probs); err != nil {
					return nil, err
				}
				groups = append(groups, [2]int{e, lab})
			}
		}
		out = append(out, l.prefixTest(i, tb, groups))
	}
	if l.cross {
		i, st := l.g1, strata{minExpected: 1}
		for e, s := range c.ep {
			if s != nil {
				obs := s[l.off[i] : l.off[i]+l.labels[i]*l.bins[i]]
				st.tables = append(st.tables, stattest.Independence{Obs: obs, Rows: l.labels[i], Cols: l.bins[i]})
				st.epochs = append(st.epochs, e)
			}
		}
		out = append(out, l.crossPending(st))
	}
	return out, nil
}

// strata is the sum of independent contingency tests, one per epoch: X²
// and the degrees of freedom add, and the sum is χ²(Σ DF) under the
// hypothesis. Each table keeps every row whose cells all expect at least
// minExpected and pools the rest into one row, left out where it too falls
// short (stattest.Independence.TestSparseRows): no neighbouring cells are
// merged, so a deviation within the kept rows cannot cancel, and n counts
// the pairs in the tested cells only. A sum over many sparse cells is
// close to χ² where a single sparse table is not (Koehler and Larntz
// 1980, "An empirical investigation of goodness-of-fit statistics for
// sparse multinomials", JASA 75(370)); the lossless false alarms are
// measured (TestHashedFalseAlarms).
type strata struct {
	tables      []stattest.Independence
	epochs      []int
	minExpected float64
}

// Test sums the tables' tests.
func (s strata) Test(float64) (stattest.Result, error) {
	var r stattest.Result
	for _, t := range s.tables {
		x, err := t.TestSparseRows(s.minExpected)
		if err != nil {
			return r, err
		}
		r.Stat, r.DF, r.N, r.Cells, r.Pooled = r.Stat+x.Stat, r.DF+x.DF, r.N+x.N, r.Cells+x.Cells, r.Pooled+x.Pooled
	}
	r.PValue = 1
	if r.DF > 0 {
		r.PValue = stattest.NoncentralChiSquaredSurvival(r.Stat, r.DF, 0)
	} else {
		r.Warnings = append(r.Warnings, stattest.ErrTooFewCells)
	}
	return r, nil
}

// TopResiduals returns the k cells with the largest standardised
// residuals over every table (Group: the table).
func (s strata) TopResiduals(k int) []stattest.Residual {
	var all []stattest.Residual
	for g, t := range s.tables {
		for _, r := range t.TopResiduals(k) {
			r.Group = g
			all = append(all, r)
		}
	}
	slices.SortStableFunc(all, func(a, b stattest.Residual) int { return cmp.Compare(math.Abs(b.Z), math.Abs(a.Z)) })
	return all[:min(k, len(all))]
}

// Pending describes position i's test of table tb, whose groups are the
// (epoch, cell) pairs groups.
func (l *hashedLayout) prefixTest(i int, tb *stattest.Table, groups [][2]int) Pending {
	cells := fmt.Sprintf("its context and the emitted prefix (%d of them)", l.labels[i])
	if !l.exact[i] {
		cells = fmt.Sprintf("its context and the emitted prefix hashed into %d labels", l.labels[i])
	}
	every := "every trial"
	if l.every > 1 {
		every = fmt.Sprintf("every %s trial", ordinal(l.every))
	}
	bins := l.bins[i]
	return Pending{name: prefixTestName(i), table: tb,
		quantity: fmt.Sprintf("TV between the emitted and target law of token %d given %s, binned into %d equal-mass bins of its PIT in a random order of the tokens; the order and the hash are drawn anew every %d trials (%d draws), and the TV is averaged over the cells and the draws; n counts %s",
			i+1, cells, bins, l.epoch, l.epochs, every),
		cell: func(g, b int) string {
			e, lab := groups[g][0], groups[g][1]
			what := "context and prefix"
			if !l.exact[i] {
				what = "hashed context and prefix"
			}
			return fmt.Sprintf("position %d, %s %d of draw %d (trials %d-%d), PIT bin %d of %d in that draw's token order",
				i+1, what, lab, e+1, int64(e)*l.epoch, int64(e+1)*l.epoch-1, b+1, bins)
		}}
}

// crossPending describes the rows test of table tb, whose groups are the
// (epoch, cell) pairs groups. Rows 2k and 2k+1 are independent under the
// hypothesis, so the first token's transform of row 2k+1 is uniform given
// anything about row 2k; any fixed dependence of the two first tokens
// shows in the re-drawn cells with positive probability per draw.
func (l *hashedLayout) crossPending(st strata) Pending {
	i := l.g1
	cells := fmt.Sprintf("the context and first token of row 2k (%d of them)", l.labels[i])
	if !l.exact[i] {
		cells = fmt.Sprintf("the context and first token of row 2k hashed into %d labels", l.labels[i])
	}
	bins := l.bins[i]
	return Pending{name: "rows of a batch (independence, first tokens in re-drawn cells)", table: st, independence: true,
		quantity: fmt.Sprintf("TV between the joint law of %s and the first token of row 2k+1 of a batch (%d equal-mass bins of its PIT in a random order of the tokens) and the product of its margins, over the cells tested; the order and the hash are drawn anew every %d trials (%d draws), a contingency test per draw, in which the cells of row 2k with too few pairs for an expected count of 1 in each bin are pooled into one, left out when it too has too few; the TV is averaged over the draws; n counts the pairs in the cells tested, of those whose row 2k+1 is a trial counted (every %s)",
			cells, bins, l.epoch, l.epochs, ordinal(l.every)),
		cell: func(g, c int) string {
			return fmt.Sprintf("rows 2k and 2k+1, cell %d of row 2k's context and first token in draw %d, row 2k+1's first-token PIT bin %d of %d in that draw's token order",
				c/bins, st.epochs[g]+1, c%bins+1, bins)
		}}
}

func sum(xs []int64) int64 {
	s := int64(0)
	for _, x := range xs {
		s += x
	}
	return s
}

// reserve asks acc for the counts of a run with copies-1 workers and
// batch B: every epoch in the total, and in each worker's chunk the
// epochs its trials (sim.ChunkSize batches) span.
func (l *hashedLayout) reserve(acc *sim.Accountant, copies int64, batch int) error {
	span := min(int64(l.epochs), int64(sim.ChunkSize)*int64(max(batch, 1))/l.epoch+2)
	what := fmt.Sprintf("check: the prefix tests' counts (%d cells a draw; %d draws in the total, up to %d in each of %d workers)", l.size, l.epochs, span, copies-1)
	if err := acc.Reserve(what, sim.MulBytes(int64(l.size), 8, int64(l.epochs)+span*(copies-1)), talliesFix); err != nil {
		return err
	}
	what = fmt.Sprintf("check: the prefix tests' masses before each place (%d pool rows × %d tokens in each of %d workers)", l.cacheRows, l.v, copies-1)
	return acc.Reserve(what, sim.MulBytes(int64(l.cacheRows)*int64(l.v), 8, copies-1), talliesFix)
}
