package check_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
)

// noTrees is a batch tree verifier that must never be called: the checks
// below are refused before the first batch.
type noTrees struct{ t *testing.T }

func (n noTrees) TreeSteps(*rand.Rand, []*sim.Tree, []sim.TreeOutcome) error {
	n.t.Error("a batch was verified: the check was not refused before it ran")
	return errors.New("not refused")
}

// Issue 30, H4 and H5: a check's input-sized storage asks the memory
// account first. Each row would exceed a budget of 0.05 GiB (per-state
// tallies of a Markov pair with 35,937 states; a batch of 8,192 trees of
// up to 1 + 64·16 = 1,025 nodes), and is refused before any trial with an error
// wrapping sim.ErrMemBudget that names the size, the flags that lower it
// and --mem-budget.
func TestCheckMemoryAccount(t *testing.T) {
	const budget = (1 << 30) / 20 // --mem-budget 0.05
	tree := func(steps sim.TreeStepper, k int) check.Rule {
		return check.Rule{Name: "external", TreeSteps: steps, Draft: sim.DraftIID, K: k,
			Drafter: func(q sim.Model, depth int) (sim.Drafter, error) {
				return draft.NewTree(sim.DraftIID, draft.Config{Q: q, K: k, Depth: depth})
			}}
	}
	for _, c := range []struct {
		name, spec string
		gamma      int
		rule       check.Rule
		batch      int
		want       []string
	}{
		{"per-state tallies (H5)", "markov:V=32,order=3,seed=1", 4, check.Rule{Name: "token", Steps: check.AlgorithmStepper{A: algos.Token{}}},
			0, []string{"tallies", "35937 states", "--gamma", "--mem-budget"}},
		{"tree batches (H4)", "markov:V=64,order=1,seed=1", 16, tree(noTrees{t}, 64),
			8192, []string{"draft trees", "8192 trees", "1025 nodes", "--batch, --k or --gamma", "--mem-budget"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr := pair(t, c.spec, c.gamma, 1)
			ch, err := sim.NewChain(pr, c.gamma)
			if err != nil {
				t.Fatal(err)
			}
			cfg := check.Config{Gamma: c.gamma, Trials: 1000, Seed: 1, Workers: 1, Batch: c.batch, MemBudget: budget}
			_, err = check.Check(context.Background(), sim.Source{Spec: c.spec, BlockSource: ch}, c.rule, cfg)
			if !errors.Is(err, sim.ErrMemBudget) {
				t.Fatalf("err = %v; want sim.ErrMemBudget", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q: %v", w, err)
				}
			}
		})
	}
}
