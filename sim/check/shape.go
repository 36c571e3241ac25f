package check

import "github.com/specsim/specsim/sim"

// DraftLength is the draft length γ (a tree's depth) that a check of a rule
// with branching branch runs at on the source bs, given the configured
// gamma: the branching's length where one is given (it fixes the depth),
// else a pool's own γ (a pool holds its draft positions), else gamma. It
// is the one owner of that fact: resolve, external and the check itself
// read it instead of re-deriving it (a pool whose γ differs from a given
// branching's length is refused by the check, not reconciled here).
func DraftLength(bs sim.BlockSource, gamma int, branch []int) int {
	if len(branch) > 0 {
		return len(branch)
	}
	if pool, ok := sim.PoolOf(bs); ok {
		return pool.Gamma
	}
	return gamma
}
