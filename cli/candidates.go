package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim/draft"
)

// kFlag is --k, the number of draft candidates, described by usage. It
// has no value of its own: unset, a command takes draft.K's default,
// draft.DefaultK for a tree rule or drafter and draft.ChainK for a chain.
func kFlag(usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: "k", Usage: usage,
		DefaultText: fmt.Sprintf("%d for a tree rule or drafter, %d for a chain", draft.DefaultK, draft.ChainK)}
}

// givenK is --k when it was given, else 0 (draft.K then gives the
// default); a given k outside 1..draft.MaxK is refused.
func givenK(c *cli.Context) (int, error) {
	if !c.IsSet("k") {
		return 0, nil
	}
	if k := c.Int("k"); k < 1 || k > draft.MaxK {
		return 0, diag.Param("k", " = %d; use 1 <= k <= %d candidates", k, draft.MaxK)
	}
	return c.Int("k"), nil
}
