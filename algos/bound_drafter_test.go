package algos

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// The set law enumerated from a drafter gives the closed forms' α*: i.i.d.
// and without-replacement drafts (OptimalAcceptance), greedy drafts
// (GreedyDraftSetLaw) and top-k (one set), on random pairs, to 1e-12; and
// its probabilities sum to 1.
func TestDrafterSetLawMatchesClosedForms(t *testing.T) {
	t.Parallel()
	for i, v := range []int{3, 5, 6} {
		p, q := randDist(t, uint64(10+i), v, 0.7), randDist(t, uint64(20+i), v, 0.7)
		for k := 1; k <= 3; k++ {
			want := map[sim.DraftKind]float64{}
			var err error
			if want[sim.DraftIID], err = OptimalAcceptance(p, q, k, true); err != nil {
				t.Fatal(err)
			}
			if want[sim.DraftWOR], err = OptimalAcceptance(p, q, k, false); err != nil {
				t.Fatal(err)
			}
			sets, probs := GreedyDraftSetLaw(q, k)
			want[sim.DraftGreedy] = OptimalAcceptanceSets(p, sets, probs)
			want[sim.DraftTopK] = OptimalAcceptanceSets(p, [][]int{sim.TopTokens(nil, q, k)}, []float64{1})
			for kind, w := range want {
				d, err := draft.NewTree(kind, draft.Config{Q: sim.Fixed(q), K: k, Depth: 1})
				if err != nil {
					t.Fatal(err)
				}
				sets, probs, err := DrafterSetLaw(d, nil)
				if err != nil {
					t.Fatal(err)
				}
				total := 0.0
				for _, pr := range probs {
					total += pr
				}
				got := OptimalAcceptanceSets(p, sets, probs)
				if math.Abs(total-1) > 1e-12 || math.Abs(got-w) > 1e-12 {
					t.Errorf("V = %d, k = %d, %s: α* from the enumerated set law %.15g (mass %.15g), closed form %.15g", v, k, kind, got, total, w)
				}
			}
		}
	}
}
