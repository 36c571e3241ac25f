package algos

import (
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// Every tree rule on every drawn tree drafter either is refused with the
// reason (DrafterError) or has an exact law that is a distribution: the
// exact engine gives a finite TV, never NaN as a verdict (rrs-wor on
// i.i.d. draws divided 0 by 0 on a repeated token and printed "TV = NaN ->
// lossless: false"). A property over both registries.
func TestDrafterErrorOrFiniteLaw(t *testing.T) {
	p := sim.Fixed{0.5, 0.3, 0.2}
	q := sim.Fixed{0.2, 0.2, 0.6} // a repeat of a rejected token is likely
	for _, name := range TreeNames() {
		e, err := LookupTree(name)
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		lw, ok := a.(sim.TreeLawer)
		if !ok {
			continue
		}
		for _, kind := range draft.TreeNames() {
			if DrafterError(e, kind, "draft") != nil {
				if !e.Distinct || !draft.Repeats(kind) {
					t.Errorf("%s on %s: refused, but the rule is not Distinct or the drafter does not repeat", name, kind)
				}
				continue
			}
			k := min(2, draft.KLimit(kind))
			d, err := draft.New(draft.Config{Name: kind, Q: q, K: k, Depth: 2, Delay: delayOf(kind)})
			if err != nil || d.Tree == nil {
				continue // a drafter this shape does not build (its own error is tested with it)
			}
			res, err := sim.ExactTree(p, d.Tree, lw, sim.TreeExactConfig{})
			if err != nil {
				t.Errorf("%s on %s: %v", name, kind, err)
				continue
			}
			if math.IsNaN(res.TV) || math.IsNaN(res.ExpectedAccepted) {
				t.Errorf("%s on %s: TV %v, E[accepted] %v", name, kind, res.TV, res.ExpectedAccepted)
			}
		}
	}
}

// delayOf is a delay the delayed drafter accepts (the others take none).
func delayOf(kind string) int {
	if draft.Delays(kind) {
		return 1
	}
	return 0
}
