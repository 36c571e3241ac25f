package algos

import (
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/stattest"
)

// Helpers shared by this package's tests.

// testRow wraps p as a row, narrowed to float32 when f32 is set, so the
// random blocks exercise both row widths.
func testRow(p []float64, f32 bool) sim.Row {
	if !f32 {
		return sim.F64(p)
	}
	r := make([]float32, len(p))
	for i, x := range p {
		r[i] = float32(x)
	}
	return sim.F32(r)
}

// mustExact is sim.Exact for a test: an error fails the test.
func mustExact(t *testing.T, pair sim.Pair, a sim.Lawer, cfg sim.ExactConfig) sim.ExactResult {
	t.Helper()
	r, err := sim.Exact(pair, a, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// blockFit draws n outcomes of a on b with rng, checks each with
// sim.CheckOutcome, and returns Pearson's χ² test of their counts in the
// cells (Accepted, Next) against law, unpooled.
func blockFit(t *testing.T, rng *rand.Rand, a sim.Algorithm, b *sim.Block, law *sim.Law, n int) stattest.Result {
	t.Helper()
	obs := make([]int64, len(law.P))
	for range n {
		o := a.Accept(rng, b)
		if err := sim.CheckOutcome(b, o); err != nil {
			t.Fatal(err)
		}
		obs[o.Accepted*(law.V+1)+o.Next+1]++
	}
	res, err := stattest.ChiSquare(obs, law.P, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// treeFit drafts one tree with rng for the tree rule e (k draws at the
// root, depth 2, branching {k, 2} for the draft kinds that take one),
// draws n outcomes of AcceptTree on it from the same rng, and returns the
// χ² test of their counts in the cells (Node, Next) against TreeLaw,
// pooling cells that expect fewer than 5.
func treeFit(t *testing.T, rng *rand.Rand, e TreeEntry, pair sim.Pair, k, n int) stattest.Result {
	t.Helper()
	a, err := e.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := draft.Config{Q: pair.Q, K: k, Depth: 2}
	if e.Draft != sim.DraftIID {
		cfg.Branch = []int{k, 2}
	}
	cfg = shapeFor(e.Draft, cfg)
	d, err := draft.NewTree(e.Draft, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var tree sim.Tree
	sim.DraftTree(rng, d, pair.P, nil, &tree)
	if err := tree.Check(); err != nil {
		t.Fatal(err)
	}
	var law sim.TreeLaw
	if err := a.(sim.TreeLawer).TreeLaw(&tree, &law); err != nil {
		t.Fatal(err)
	}
	obs := make([]int64, len(law.P))
	for range n {
		o := a.AcceptTree(rng, &tree)
		obs[o.Node*(tree.V+1)+o.Next+1]++
	}
	res, err := stattest.ChiSquare(obs, law.P, 5)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// shapeFor fits a drafter configuration to the shapes kind drafts: K at
// most draft.MaxK (hub, SpecHub's pair, drafts two) and no Branch for a
// drafter that does not read it (the drafter refuses both, with the
// reason, which sim/draft's tests check).
func shapeFor(kind sim.DraftKind, cfg draft.Config) draft.Config {
	cfg.K = min(cfg.K, draft.KLimit(kind.String()))
	if !draft.Branches(kind.String()) {
		cfg.Branch = nil
	}
	return cfg
}
