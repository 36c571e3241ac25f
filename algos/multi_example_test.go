package algos_test

import (
	"fmt"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// Exact acceptance of the lossless multi-draft rules on the three-symbol
// toy of Khisti et al. (p uniform, q = (1/3, 0.1, 17/30)) with k = 2
// drafts, next to the optimal bound of each draft law.
func Example_multiDraft() {
	p := sim.Fixed{1.0 / 3, 1.0 / 3, 1.0 / 3}
	q := sim.Fixed{1.0 / 3, 0.1, 17.0 / 30}
	for _, name := range []string{"specinfer", "kseq", "rrs-wor", "greedy-draft"} {
		e, _ := algos.LookupTree(name)
		a, _ := e.Build(nil)
		d, _ := draft.NewTree(e.Draft, draft.Config{Q: q, K: 2, Depth: 1})
		res, _ := sim.ExactTree(p, d, a.(sim.TreeLawer), sim.TreeExactConfig{})
		fmt.Printf("%-12s %-6s acceptance %.4f lossless %v\n", name, e.Draft, res.Acceptance, res.Lossless)
	}
	iid, _ := algos.OptimalAcceptance(p, q, 2, true)
	wor, _ := algos.OptimalAcceptance(p, q, 2, false)
	fmt.Printf("bound iid %.4f, without replacement %.4f\n", iid, wor)
	// Output:
	// specinfer    iid    acceptance 0.7900 lossless true
	// kseq         iid    acceptance 0.8102 lossless true
	// rrs-wor      wor    acceptance 0.8205 lossless true
	// greedy-draft greedy acceptance 0.8974 lossless true
	// bound iid 0.8567, without replacement 0.9474
}
