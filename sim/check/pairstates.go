package check

import (
	"fmt"

	"github.com/specsim/specsim/sim/stattest"
)

// The pair family ranks first (with the pool's, which never applies to
// the same check): the per-position tests of a pair check.
func init() {
	registerFamily(10, func(rn *runner) Family {
		if !rn.marg || rn.w.pool != nil {
			return nil
		}
		return newPairFamily(rn.w)
	})
}

// pairFamily is a model pair's tests of the emitted tokens given the
// target's state (the package doc's step 2): one chi-squared table per
// position with a group per state (the last `order` tokens), and the
// full joint of the first γ+1 tokens where V^(γ+1) <= maxJointCells.
type pairFamily struct {
	w *world
	cells
}

// newPairFamily is an empty state over w.
func newPairFamily(w *world) *pairFamily {
	f := &pairFamily{w: w, cells: cells{pos: make([]int64, (w.g+1)*w.states*w.v)}}
	if w.jointLen > 0 {
		f.joint = make([]int64, pow(w.v, w.jointLen))
	}
	return f
}

func (f *pairFamily) name() string  { return "pair states" }
func (f *pairFamily) byKind() bool  { return false }
func (f *pairFamily) emitted() bool { return true }

// add counts each token in its position and state, and the joint.
func (f *pairFamily) add(o *roundObs) {
	w, seq := f.w, o.seq
	for i := 0; i <= w.g && w.states > 0; i++ {
		f.pos[(i*w.states+w.stateOf(seq[:i]))*w.v+seq[i]]++
	}
	if w.jointLen > 0 {
		code := 0
		for _, x := range seq[:w.jointLen] {
			code = code*w.v + x
		}
		f.joint[code]++
	}
}

func (f *pairFamily) merge(src Family) error {
	f.cells.merge(&src.(*pairFamily).cells)
	return nil
}

// tests yields the per-state position tests and the joint test (a pair
// has no row kinds: kind is ignored).
func (f *pairFamily) tests(int) ([]Pending, error) {
	w := f.w
	var out []Pending
	for i := 0; i <= w.g && w.states > 0; i++ {
		tb := &stattest.Table{}
		for s := 0; s < w.states; s++ {
			k := (i*w.states + s) * w.v
			if err := tb.Add(f.pos[k:k+w.v], w.stateRow[s]); err != nil {
				return nil, err
			}
		}
		out = append(out, Pending{name: fmt.Sprintf("position %d given its state", i+1), table: tb, oneHot: w.oneHot,
			quantity: fmt.Sprintf("TV between the emitted and target law of token %d given the target's state (the last order tokens), averaged over the visited states", i+1),
			cell:     func(s, x int) string { return fmt.Sprintf("position %d in target state %d, token %d", i+1, s, x) }})
	}
	if w.jointLen > 0 {
		tb := &stattest.Table{}
		if err := tb.Add(f.joint, seqLaw(w.target, w.v, w.jointLen)); err != nil {
			return nil, err
		}
		out = append(out, Pending{name: fmt.Sprintf("first %d tokens (joint)", w.jointLen), table: tb, oneHot: w.oneHot,
			quantity: fmt.Sprintf("TV between the emitted and target joint law of the first %d tokens (sparse cells pooled)", w.jointLen),
			cell:     func(_, code int) string { return fmt.Sprintf("tokens %s", digits(code, w.v, w.jointLen, 0)) }})
	}
	return out, nil
}
