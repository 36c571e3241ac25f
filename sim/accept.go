package sim

// RootAccepted is the one definition of multi-draft acceptance used by
// 'simulate exact --k' (ExactTree), the scenarios and the experiments: a
// tree step is accepted when its first emitted token is one of the tokens
// drafted at the root, whether the rule accepted it as a drafted node
// (o.Node != 0) or emitted it as its correction or bonus (o.Node == 0 and
// o.Next is a root draft: a coincidental match counts). This is the
// acceptance of SpecTr (Sun et al. 2023, arXiv 2310.15141), Hu et al.
// (arXiv 2502.18779) and Khisti et al. (arXiv 2410.18234), the quantity
// their optimal-acceptance bounds bound. TreeExactResult.FirstAccepted
// keeps the narrower "accepted as drafted" for rules that may emit a draft
// token as a correction.
func RootAccepted(t *Tree, o TreeOutcome) bool {
	return o.Node != 0 || (o.Next != NoToken && t.Child(0, o.Next) >= 0)
}

// DraftAccepted reports whether a tree step accepted a drafted node as
// such (o.Node != 0): the narrower event reported as first_accepted
// (TreeExactResult.FirstAccepted, the scenarios), which leaves out a
// correction or bonus token that happens to equal a root draft. Outputs
// name RootAccepted "acceptance" and DraftAccepted "first_accepted", never
// the other way round.
func DraftAccepted(o TreeOutcome) bool { return o.Node != 0 }
