package cliutil

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/internal/diag"
)

// MaxMemBudgetGiB is the largest --mem-budget, in GiB (1 PiB).
const MaxMemBudgetGiB = 1 << 20

// MemBudget returns the bytes of a --mem-budget of gib GiB, honoured
// exactly (rounded down to whole bytes), or a usage error for a budget
// that is not a number in (0, MaxMemBudgetGiB] or rounds to no byte at
// all: 1e-10 GiB (0.1 bytes) became 0 bytes, which every consumer reads
// as "the default", 4 GiB.
func MemBudget(gib float64) (int64, error) {
	if !(gib > 0) || gib > MaxMemBudgetGiB {
		return 0, diag.Usage(fmt.Errorf("--mem-budget = %g; give a size in GiB in (0, %d]", gib, MaxMemBudgetGiB))
	}
	b := math.Floor(gib * (1 << 30))
	if b < 1 {
		return 0, diag.Usage(fmt.Errorf("--mem-budget = %g GiB is %.3g bytes, less than one; give at least %.3g (one byte), e.g. 0.001 for 1 MiB", gib, gib*(1<<30), 1.0/(1<<30)))
	}
	return int64(b), nil
}
