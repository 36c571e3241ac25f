package check_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/longtest"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/sim/stattest"
)

// hashedFalseAlarms runs token verification, a lossless rule, n times
// (seeds 1..n) on a pool of 64 contexts over V = 50 (the cells of
// positions 2 and 3 hashed) and on a Markov pair over V = 7 of order 2
// (every cell exact), at γ = 2, and requires of each prefix test (source,
// position) no more rejections at raw level 0.01 than Binomial(n, 0.01)
// allows with probability 1-1e-3.
func hashedFalseAlarms(t *testing.T, n int, trials int64) {
	const level = 0.01
	_, hi := stattest.BinomialAcceptance(n, level, 1e-3)
	for _, spec := range []string{"dirichlet:V=50,a=0.3,beta=0.7,contexts=64", "markov:V=7,order=2,seed=9"} {
		src, err := source.New(spec, 2, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		alarms := make([]int, 3)
		hashed := make([]bool, 3)
		for s := 1; s <= n; s++ {
			res, err := check.Check(context.Background(), src, check.ChainRule("token", algos.Token{}),
				check.Config{Gamma: 2, Trials: trials, Seed: uint64(s), Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for i := range alarms {
				x := findTest(t, res, fmt.Sprintf("position %d given its context and prefix (re-drawn cells)", i+1))
				hashed[i] = strings.Contains(x.Quantity, "hashed into")
				if x.PValue < level {
					alarms[i]++
				}
			}
		}
		for i, a := range alarms {
			t.Logf("%s, position %d (cells hashed: %v): %d of %d runs reject at level %g (at most %d allowed)", spec, i+1, hashed[i], a, n, level, hi)
			if a > hi {
				t.Errorf("%s, position %d: %d false alarms in %d runs at level %g; at most %d allowed", spec, i+1, a, n, level, hi)
			}
		}
		if want := strings.HasPrefix(spec, "dirichlet"); hashed[2] != want {
			t.Errorf("%s: position 3's cells hashed %v, want %v", spec, hashed[2], want)
		}
	}
}

// TestHashedFalseAlarmsShort: 30 runs of 20,000 trials per source.
func TestHashedFalseAlarmsShort(t *testing.T) {
	t.Parallel()
	hashedFalseAlarms(t, 30, 20000)
}

// TestHashedFalseAlarms (opt-in, -prob or SPECSIM_LONG=1): 300 runs of
// 20,000 trials per source.
func TestHashedFalseAlarms(t *testing.T) {
	if !*prob && !longtest.Enabled() {
		t.Skip("opt-in: go test ./sim/check -run 'TestHashedFalseAlarms$' -prob")
	}
	hashedFalseAlarms(t, 300, 20000)
}
