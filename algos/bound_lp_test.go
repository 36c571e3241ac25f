package algos

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// couplingLP solves the coupling problem behind α* directly, by the
// simplex method (gonum/optimize/convex/lp): over π(T, y) ≥ 0 for every
// draft set T of the law (sets, probs) and every token y, with Σ_y π(T, y)
// = Pr(T) and Σ_T π(T, y) = p(y) (one of the p rows left out: it is
// implied), maximise Σ_{y∈T} π(T, y) = Pr(Y ∈ S).
func couplingLP(t *testing.T, p []float64, sets [][]int, probs []float64) float64 {
	t.Helper()
	v, ns := len(p), len(sets)
	rows, cols := ns+v-1, ns*v
	a := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	c := make([]float64, cols)
	for i, set := range sets {
		b[i] = probs[i]
		for y := range v {
			col := i*v + y
			a.Set(i, col, 1)
			if y < v-1 {
				a.Set(ns+y, col, 1)
			}
		}
		for _, y := range set {
			c[i*v+y] = -1
		}
	}
	for y := range v - 1 {
		b[ns+y] = p[y]
	}
	opt, _, err := lp.Simplex(c, a, b, 1e-12, nil)
	if err != nil {
		t.Fatal(err)
	}
	return -opt
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
