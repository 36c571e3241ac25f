package sim

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
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

// hugeDrafter estimates more trees than MaxExactTrees and must not be
// enumerated.
type hugeDrafter struct{ t *testing.T }

func (hugeDrafter) Kind() DraftKind                { return DraftWOR }
func (hugeDrafter) Depth() int                     { return 6 }
func (hugeDrafter) Draft(*rand.Rand, []int, *Tree) {}
func (hugeDrafter) EstimateTrees([]int) float64    { return 1.2e19 }
func (d hugeDrafter) Enumerate([]int, func(*Tree, float64) error) error {
	d.t.Error("Enumerate called on a drafter estimated at 1.2e19 trees")
	return nil
}

// A drafter whose estimate exceeds MaxExactTrees (the tree: wor,
// branching 3,2,1,1,1,1 on V = 4, about 1.2e19 trees) is refused before
// enumerating.
func TestExactTreeRefusesAtOnce(t *testing.T) {
	q := Fixed{0.25, 0.25, 0.25, 0.25}
	_, err := ExactTree(q, hugeDrafter{t}, nil, TreeExactConfig{L: 2})
	if err == nil || !strings.Contains(err.Error(), "about 1.2e+19 draft trees") {
		t.Fatalf("err = %v", err)
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
