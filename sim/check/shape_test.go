package check

import (
	"testing"

	"github.com/specsim/specsim/sim"
)

// TestDraftLength pins DraftLength's rule: a branching fixes the depth,
// else a pool its γ, else the configured gamma.
func TestDraftLength(t *testing.T) {
	t.Parallel()
	pool := &sim.Pool{Gamma: 3}
	for _, c := range []struct {
		name   string
		bs     sim.BlockSource
		gamma  int
		branch []int
		want   int
	}{
		{"no source", nil, 4, nil, 4},
		{"no source, branching", nil, 4, []int{2, 2}, 2},
		{"pool", pool, 4, nil, 3},
		{"pool in a source", sim.Source{Spec: "x", BlockSource: pool}, 7, nil, 3},
		{"pool and branching", pool, 4, []int{2, 1, 1, 1, 1}, 5},
	} {
		if got := DraftLength(c.bs, c.gamma, c.branch); got != c.want {
			t.Errorf("%s: DraftLength = %d, want %d", c.name, got, c.want)
		}
	}
}
