package resolve_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/resolve"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// untempered is a temperature mismatch: the check's target and draft are
// the pool's rows (a sampler at temperature T), and the sampler verifies
// the harness's drafts with token verification on the rows at
// temperature 1 (p_1 ∝ p_T^T), ratio and residual alike. Each step's
// outcome law given the drafts is then not token's (for the pool's rows),
// and the emitted law is off by a temperature of about 3%.
type untempered struct{ p, q [][][]float64 } // [context][position][token]

func newUntempered(pl *sim.Pool, T float64) untempered {
	var u untempered
	tilt := func(r []float32) []float64 {
		x := make([]float64, len(r))
		s := 0.0
		for k, v := range r {
			x[k] = math.Pow(float64(v), T)
			s += x[k]
		}
		for k := range x {
			x[k] /= s
		}
		return x
	}
	for c := 0; c < pl.Contexts; c++ {
		var p, q [][]float64
		for i := 0; i <= pl.Gamma; i++ {
			p = append(p, tilt(pl.PRow(c, i)))
			if i < pl.Gamma {
				q = append(q, tilt(pl.QRow(c, i)))
			}
		}
		u.p, u.q = append(u.p, p), append(u.q, q)
	}
	return u
}

func (u untempered) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	for i := range bs {
		b := &bs[i]
		c := sim.Block{Tokens: b.Tokens, Ctx: b.Ctx, Q: make([]sim.Row, len(b.Q)), P: make([]sim.Row, len(b.P))}
		for j := range c.Q {
			c.Q[j] = sim.F64(u.q[b.Ctx][j])
		}
		for j := range c.P {
			c.P[j] = sim.F64(u.p[b.Ctx][j])
		}
		outs[i] = algos.Token{}.Accept(rng, &c)
	}
	return nil
}

// The temperature-mismatch bug (ratio at T = 1 for a sampler at T = 0.97)
// is detected by the default check or the check's fits name the rule
// whose conformance test detects it: token's law explains the outcomes
// best of the lossless rules, and --conform token is violated at 50,000
// trials.
func TestTemperatureMismatch(t *testing.T) {
	t.Parallel()
	src, err := source.New("dirichlet:V=1000,a=0.1,beta=0.7", 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := sim.PoolOf(src.BlockSource)
	bug := newUntempered(pl, 0.97)
	res, err := check.Check(context.Background(), src, check.Rule{Name: "untempered", Steps: bug},
		check.Config{Trials: 50000, Seed: 1, Workers: 2, Candidates: resolve.Candidates()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != check.Violated {
		var best check.Fit
		for _, f := range res.Fits {
			if f.Lossless {
				best = f
				break
			}
		}
		if best.Name != "token" {
			t.Fatalf("not detected, and the best lossless fit is %q (fits %+v), not token", best.Name, res.Fits)
		}
		if !strings.Contains(res.Claim, "no deviation") {
			t.Errorf("claim %q", res.Claim)
		}
	}
	law, name, err := resolve.ChainLaw("token", nil)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := check.Check(context.Background(), src, check.Rule{Name: "untempered", Steps: bug, Law: law, LawName: name, Conform: true},
		check.Config{Trials: 50000, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if conf.Verdict != check.Violated {
		t.Errorf("--conform token: %s (%s)", conf.Verdict, conf.Claim)
	}
	t.Logf("default check: %s; conformance to token: %s", res.Claim, conf.Claim)
}
