package algos

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// couplingLP solves the coupling problem behind α* directly, by the
// simplex method (WeightedCouplingLP with every weight 1): over π(T, y) ≥
// 0 for every draft set T of the law (sets, probs) and every token y, with
// Σ_y π(T, y) = Pr(T) and Σ_T π(T, y) = p(y), maximise Σ_{y∈T} π(T, y) =
// Pr(Y ∈ S).
func couplingLP(t *testing.T, p []float64, sets [][]int, probs []float64) float64 {
	t.Helper()
	w := make([][]float64, len(sets))
	for i, set := range sets {
		w[i] = make([]float64, len(set))
		for j := range set {
			w[i][j] = 1
		}
	}
	opt, err := WeightedCouplingLP(p, sets, probs, w)
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

// The bound's α* agrees with the coupling LP solved by the simplex
// method, to 1e-9, on small pairs (V ≤ 5, k ≤ 3): i.i.d. drafts (the
// prefix form and the exhaustive min-cut), without replacement (the
// exhaustive min-cut), greedy drafts and top-k (the max-flow over their
// set laws).
func TestBoundMatchesCouplingLP(t *testing.T) {
	for _, c := range []struct{ v, k int }{{3, 2}, {4, 2}, {4, 3}, {5, 2}, {5, 3}} {
		p, q := randDist(t, uint64(c.v*13+c.k), c.v, 0.5), randDist(t, uint64(c.v*13+c.k+77), c.v, 0.5)
		name := fmt.Sprintf("V=%d/k=%d", c.v, c.k)
		iidSets, iidProbs, err := DraftSetLaw(q, c.k, true)
		if err != nil {
			t.Fatal(err)
		}
		worSets, worProbs, err := DraftSetLaw(q, c.k, false)
		if err != nil {
			t.Fatal(err)
		}
		grSets, grProbs := GreedyDraftSetLaw(q, c.k)
		top := [][]int{sim.TopTokens(nil, q, c.k)}
		prefix, err := OptimalAcceptanceIID(p, q, c.k)
		if err != nil {
			t.Fatal(err)
		}
		iid, _ := OptimalAcceptanceExhaustive(p, q, c.k, true)
		wor, _ := OptimalAcceptanceExhaustive(p, q, c.k, false)
		for _, r := range []struct {
			what        string
			bound, want float64
		}{
			{"iid prefix", prefix, couplingLP(t, p, iidSets, iidProbs)},
			{"iid exhaustive", iid, couplingLP(t, p, iidSets, iidProbs)},
			{"wor exhaustive", wor, couplingLP(t, p, worSets, worProbs)},
			{"greedy max-flow", OptimalAcceptanceSets(p, grSets, grProbs), couplingLP(t, p, grSets, grProbs)},
			{"top-k max-flow", OptimalAcceptanceSets(p, top, []float64{1}), couplingLP(t, p, top, []float64{1})},
		} {
			if math.Abs(r.bound-r.want) > 1e-9 {
				t.Errorf("%s %s: bound %.15g, coupling LP %.15g", name, r.what, r.bound, r.want)
			}
		}
	}
}
