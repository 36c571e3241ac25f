package check

import (
	"fmt"
	"slices"

	"github.com/specsim/specsim/sim/stattest"
)

// The pool family ranks first: the per-position tests of a pool check.
func init() {
	registerFamily(10, func(rn *runner) Family {
		if !rn.marg || rn.w.pool == nil {
			return nil
		}
		return newPoolFamily(rn.w, rn.kinds())
	})
}

// poolFamily is a positional pool's binned tests (the package doc's step
// 2): per position, a chi-squared test of the emitted token's fine bin
// (tokens of each (context, position) sorted by p/q into equal-mass
// bins, the contexts the table's groups), and the dependence test of the
// joint of every position's coarse bin against the product law, per
// context. Its counts are pooled: a row kind's tests take the groups of
// its contexts.
type poolFamily struct {
	w  *world
	nk int // row kinds (contexts c of kind c mod nk), 0 without
	cells
}

// newPoolFamily is an empty state over w.
func newPoolFamily(w *world, kinds int) *poolFamily {
	return &poolFamily{w: w, nk: kinds, cells: cells{pos: make([]int64, w.nc*(w.g+1)*w.bins), joint: make([]int64, w.nc*pow(w.jb, w.g+1))}}
}

func (f *poolFamily) name() string  { return "pool bins" }
func (f *poolFamily) byKind() bool  { return false }
func (f *poolFamily) emitted() bool { return true }

// add counts the round's γ+1 tokens' fine bins and their coarse joint.
func (f *poolFamily) add(o *roundObs) {
	w, c, g := f.w, o.c, f.w.g
	code := 0
	for i := 0; i <= g; i++ {
		b := int(w.binOf[w.poolIdx(c, i)*w.v+o.seq[i]])
		f.pos[w.poolIdx(c, i)*w.bins+b]++
		code = code*w.jb + b*w.jb/w.bins
	}
	f.joint[c*pow(w.jb, g+1)+code]++
}

func (f *poolFamily) merge(src Family) error {
	f.cells.merge(&src.(*poolFamily).cells)
	return nil
}

// contexts returns the contexts of kind (-1: all).
func (f *poolFamily) contexts(kind int) []int {
	var cs []int
	for c := 0; c < f.w.nc; c++ {
		if kind < 0 || c%f.nk == kind {
			cs = append(cs, c)
		}
	}
	return cs
}

// tests yields the per-position tests and the dependence test of the
// contexts of kind (-1: every context).
func (f *poolFamily) tests(kind int) ([]Pending, error) {
	w, cs := f.w, f.contexts(kind)
	var out []Pending
	// oneHot: every target row of the tested contexts has one token
	// (greedy row kinds); a table then has one possible cell per group
	// and tests that nothing impossible was emitted
	oneHot := true
	for i := 0; i <= w.g; i++ {
		tb := &stattest.Table{}
		for _, c := range cs {
			k := w.poolIdx(c, i) * w.bins
			if err := tb.Add(f.pos[k:k+w.bins], w.binP[k:k+w.bins]); err != nil {
				return nil, err
			}
			oneHot = oneHot && slices.IndexFunc(w.binP[k:k+w.bins], func(x float64) bool { return x > 0 && x < 1 }) < 0
		}
		out = append(out, Pending{name: fmt.Sprintf("position %d", i+1), table: tb, oneHot: oneHot,
			quantity: fmt.Sprintf("TV between the emitted and target law of position %d, binned into %d equal-mass bins (sorted by p/q), averaged over %d contexts", i+1, w.bins, len(cs)),
			cell: func(gr, b int) string {
				return fmt.Sprintf("position %d in context %d, bin %d of %d (tokens sorted by p/q, bin 1 the lowest)", i+1, cs[gr], b+1, w.bins)
			}})
	}
	joint, err := f.jointTest(cs, oneHot)
	if err != nil {
		return nil, err
	}
	return append(out, joint), nil
}

// jointTest is the dependence test of contexts cs: the joint of every
// position's coarse bin against the product of their target masses.
func (f *poolFamily) jointTest(cs []int, oneHot bool) (Pending, error) {
	w, g := f.w, f.w.g
	tb := &stattest.Table{}
	cells := pow(w.jb, g+1)
	probs := make([]float64, cells)
	// coarse[i*jb+cb] is position i's mass in coarse bin cb, summed
	// once per context (it was summed again for each of the jb^(γ+1)
	// cells: 2 s at γ = 8, which delayed an interrupted check's
	// report past the Ctrl-C bound); same sums, same order
	coarse := make([]float64, (g+1)*w.jb)
	for _, c := range cs {
		clear(coarse)
		for i := 0; i <= g; i++ {
			base := w.poolIdx(c, i) * w.bins
			for b := 0; b < w.bins; b++ {
				coarse[i*w.jb+b*w.jb/w.bins] += w.binP[base+b]
			}
		}
		for code := range probs {
			pr, x := 1.0, code
			for i := g; i >= 0; i-- {
				pr *= coarse[i*w.jb+x%w.jb]
				x /= w.jb
			}
			probs[code] = pr
		}
		if err := tb.Add(f.joint[c*cells:(c+1)*cells], probs); err != nil {
			return Pending{}, err
		}
	}
	return Pending{name: fmt.Sprintf("positions 1-%d jointly (dependence)", g+1), table: tb, oneHot: oneHot,
		quantity: fmt.Sprintf("TV between the emitted joint law of positions 1-%d, each binned into %d equal-mass bins, and the target product law, averaged over %d contexts", g+1, w.jb, len(cs)),
		cell: func(gr, code int) string {
			return fmt.Sprintf("positions 1-%d in context %d, coarse bins %s of %d (by p/q)", g+1, cs[gr], digits(code, w.jb, g+1, 1), w.jb)
		}}, nil
}
