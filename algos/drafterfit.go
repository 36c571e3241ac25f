package algos

import (
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim/draft"
)

// DrafterError is the reason tree rule e cannot verify the trees of the
// drafter named kind, or nil: a rule that verifies a node's draws as
// distinct tokens (Info.Distinct, recursive rejection sampling without
// replacement) has no law on a drafter that may draw a token twice
// (draft.Repeats), where its ratio r(x)/s(x) is 0/0 on the repeat. field
// names the caller's field that chose the drafter (draft, or generate's
// drafter).
func DrafterError(e TreeEntry, kind, field string) error {
	if e.Distinct && draft.Repeats(kind) {
		return diag.Param(field, " %s: %s verifies a node's draws as distinct tokens (drafted without replacement), and %s may draw a token twice, where the rule is not defined; use the rule's own draft kind, %s", kind, e.Name, kind, e.Draft)
	}
	return nil
}
