package check_test

import (
	"context"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim/check"
)

// BenchmarkCheck is the cost of a check per trial: token on a V = 1,000
// Dirichlet pool at γ = 4 with its law test, one worker (the docs' and
// issue 27's reference run); it reports ns/trial.
func BenchmarkCheck(b *testing.B) {
	src := newSource(b, "dirichlet:V=1000,a=0.3,beta=0.7", 4, 1)
	const trials = 50000
	for b.Loop() {
		if _, err := check.Check(context.Background(), src, check.ChainRule("token", algos.Token{}), check.Config{Trials: trials, Seed: 1, Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*trials), "ns/trial")
}
