package check

import "github.com/specsim/specsim/internal/binenc"

// The first-half family ranks after the hashed family and before the law
// family: one test, of the first emitted token's probability integral
// transform (token-index order). Under the null the transform is
// uniform on [0, 1) (pit.go), so it falls below 1/2 with probability
// exactly 1/2; the test is the chi-squared of the two halves' counts
// against 1/2 each.
func init() {
	registerFamily(45, func(rn *runner) Family {
		if !rn.marg {
			return nil
		}
		return &firstHalfFamily{c: make([]int64, 2)}
	})
}

// firstHalfFamily counts the rounds whose first transform is below 1/2
// (c[0]) and the others (c[1]); pooled only.
type firstHalfFamily struct {
	c []int64
}

func (f *firstHalfFamily) name() string  { return "first-half" }
func (f *firstHalfFamily) byKind() bool  { return false }
func (f *firstHalfFamily) emitted() bool { return true }

// add counts the round's first transform in token-index order.
func (f *firstHalfFamily) add(o *roundObs) {
	if o.u[byIdx][0] < 0.5 {
		f.c[0]++
	} else {
		f.c[1]++
	}
}

func (f *firstHalfFamily) merge(src Family) error {
	s := src.(*firstHalfFamily)
	f.c[0] += s.c[0]
	f.c[1] += s.c[1]
	return nil
}

func (f *firstHalfFamily) appendBinary(b []byte) []byte { return binenc.AppendInts(b, f.c) }

func (f *firstHalfFamily) readBinary(r *binenc.Reader) { readCounts(r, "first-half counts", f.c) }

// tests yields the one test of every trial; a row kind has none.
func (f *firstHalfFamily) tests(kind int) ([]Pending, error) {
	if kind >= 0 {
		return nil, nil
	}
	p, err := UniformTest("first token's transform below 1/2",
		"the first emitted token's probability integral transform (token-index order) below or above 1/2 (n = rounds)", f.c)
	return []Pending{p}, err
}
