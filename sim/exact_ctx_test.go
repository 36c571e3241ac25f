package sim

import (
	"context"
	"errors"
	"testing"
)

// ctxLawer is token verification's law (min(1, p/q) acceptance with the
// residual), enough to drive the enumeration; the tests here only look at
// its size and its cancellation.
type ctxLawer struct{}

func (ctxLawer) Law(b *Block, l *Law) error {
	l.Reset(len(b.Tokens), b.P[0].Len())
	l.Add(0, NoToken, 1)
	return nil
}

// estimateTrees is exact when every draft row has the root's support: it
// matches the number of trees ExactTree enumerates.
func TestEstimateTreesExact(t *testing.T) {
	q := Fixed{0.4, 0.3, 0.2, 0.1}
	for _, c := range []DrafterConfig{
		{Kind: DraftWOR, Q: q, Branch: []int{3, 2}},
		{Kind: DraftWOR, Q: q, Branch: []int{2, 1, 1}},
		{Kind: DraftGreedy, Q: q, Branch: []int{2, 2}},
		{Kind: DraftGreedy, Q: q, Branch: []int{4, 1}},
		{Kind: DraftTopK, Q: q, Branch: []int{3, 2}},
		{Kind: DraftIID, Q: q, K: 2, Depth: 2},
	} {
		d, err := NewDrafter(c)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := d.Enumerate(nil, func(*Tree, float64) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if est := estimateTrees(d, nil); est < float64(n)-0.5 || est > float64(n)+0.5 {
			t.Errorf("%v %v k=%d: estimate %g, enumerated %d", c.Kind, c.Branch, c.K, est, n)
		}
	}
}

// The tree (wor, branching 3,2,1,1,1,1 on V = 4: about 1.2e19
// trees) is refused before enumerating.
func TestExactTreeRefusesAtOnce(t *testing.T) {
	q := Fixed{0.25, 0.25, 0.25, 0.25}
	d, err := NewDrafter(DrafterConfig{Kind: DraftWOR, Q: q, Branch: []int{3, 2, 1, 1, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ExactTree(q, d, nil, TreeExactConfig{L: 2})
	if err == nil {
		t.Fatal("no error")
	}
}

// A cancelled context stops the chain enumeration with context.Canceled.
func TestExactContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := make(Fixed, 16)
	for i := range p {
		p[i] = 1.0 / 16
	}
	_, err := ExactContext(ctx, Pair{Name: "u", P: p, Q: p}, ctxLawer{}, ExactConfig{Gamma: 4, L: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
