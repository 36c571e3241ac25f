package algos

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// hubExact runs the exact engine for rule r on pair with the hub drafter
// (k drafts at the root, chains to depth).
func hubExact(t *testing.T, r SpecHub, pair sim.Pair, k, depth int) sim.TreeExactResult {
	t.Helper()
	d := drafterFor(t, draft.DraftHub, pair.Q, k, depth)
	res, err := sim.ExactTree(pair.P, d, r, sim.TreeExactConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// SpecHub is lossless on its pair: on seeded Markov pairs (V = 3..6,
// draft quality 0 to 0.8) with k = 1, 2 and depth 1..3 the exact engine
// finds the law of the emitted tokens equal to the target's (TV ≤
// 1e-12), and the mutant spechub-second-vs-p off it at k = 2 (TV >
// 1e-4: it spends i's target mass twice wherever p(i) > q(i)).
func TestSpecHubLossless(t *testing.T) {
	cases := []struct {
		seed    uint64
		v       int
		quality float64
	}{{1, 3, 0.3}, {2, 4, 0.5}, {3, 5, 0.0}, {4, 6, 0.8}, {5, 4, 0.1}}
	for _, c := range cases {
		pair := treePair(t, c.seed+300, c.v, c.quality)
		for k := 1; k <= 2; k++ {
			for depth := 1; depth <= 3; depth++ {
				name := fmt.Sprintf("seed=%d/V=%d/k=%d/depth=%d", c.seed, c.v, k, depth)
				res := hubExact(t, SpecHub{}, pair, k, depth)
				if !res.Lossless || res.TV > 1e-12 {
					t.Errorf("%s: spechub TV %.3g (lossless %v)", name, res.TV, res.Lossless)
				}
				if k < 2 {
					continue
				}
				if bad := hubExact(t, SpecHub{secondVsP: true}, pair, k, depth); bad.Lossless || bad.TV < 1e-4 {
					t.Errorf("%s: mutant TV %.3g (lossless %v), want a visible bias", name, bad.TV, bad.Lossless)
				}
			}
		}
	}
}

// SpecHub attains the optimum of its pair law at the root: with the set
// law {a, i} w.p. q(i)/(1 − q(a)) (GreedyDraftSetLaw at k = 2, and the
// hub drafter's own enumerated set law, DrafterSetLaw), the exact
// first-position acceptance equals OptimalAcceptanceSets (the bound's
// min-cut α*) and the closed form min(1, p(a) + Σ_{i≠a} min(p(i),
// q(i)/(1 − q(a)))) to 1e-12, on Dirichlet pairs V = 3..8; the first
// token's law is p (TV ≤ 1e-12).
func TestSpecHubAttainsBound(t *testing.T) {
	for _, c := range []struct {
		v int
		a float64
	}{{3, 0.5}, {4, 0.3}, {5, 1}, {6, 0.2}, {8, 0.5}, {8, 0.1}} {
		name := fmt.Sprintf("V=%d/a=%g", c.v, c.a)
		p, q := randDist(t, uint64(c.v*11)+1, c.v, c.a), randDist(t, uint64(c.v*11)+500, c.v, c.a)
		pair := sim.Pair{P: sim.Fixed(p), Q: sim.Fixed(q)}
		res := hubExact(t, SpecHub{}, pair, 2, 1)
		sets, probs := GreedyDraftSetLaw(q, 2)
		want := OptimalAcceptanceSets(p, sets, probs)
		// the same α* from the hub drafter's own enumerated set law
		hsets, hprobs, err := DrafterSetLaw(drafterFor(t, draft.DraftHub, pair.Q, 2, 1), nil)
		if err != nil {
			t.Fatal(err)
		}
		if own := OptimalAcceptanceSets(p, hsets, hprobs); math.Abs(own-want) > 1e-12 {
			t.Errorf("%s: alpha* of the hub set law %.15g, of greedy's at k = 2 %.15g", name, own, want)
		}
		a := draft.HubToken(q)
		closed := p[a]
		for i := range p {
			if i != a {
				closed += math.Min(p[i], q[i]/(1-q[a]))
			}
		}
		closed = math.Min(1, closed)
		if math.Abs(res.Acceptance-want) > 1e-12 || math.Abs(res.Acceptance-closed) > 1e-12 {
			t.Errorf("%s: acceptance %.15g, alpha* %.15g, closed form %.15g", name, res.Acceptance, want, closed)
		}
		if res.TV > 1e-12 {
			t.Errorf("%s: TV %.3g", name, res.TV)
		}
	}
}

// TestSpecHubFast checks the sampler's completeFast against the law's
// complete on 300 random pairs (V from 2 to 3,000, zeros planted in p and
// q, every other pair in float32 rows, the rule and its mutant): every
// residual entry but the hub's is bit for bit the same, and A, B, r(a) and
// res[a] agree to 1e-12 of the mass (four running sums against one, in
// another order).
func TestSpecHubFast(t *testing.T) {
	rng := sim.NewRand(17, sim.StreamID("spechub-fast"))
	for trial := range 300 {
		v := 2 + rng.IntN(3000)
		p := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2+1))
		q := randRow(rng, v, 1+3*rng.Float64(), rng.IntN(v/2))
		pr, qr := sim.F64(p), sim.F64(q)
		if trial%2 == 1 {
			pr, qr = sim.F32(toF32(p)), sim.F32(toF32(q))
		}
		r := SpecHub{secondVsP: trial%3 == 0}
		a := sim.ArgmaxRow(qr)
		slow, fast := newHubPlan(pr, qr, a), newHubPlan(pr, qr, a)
		ws, wf := make([]float64, v), make([]float64, v)
		r.complete(slow, ws)
		r.completeFast(fast, wf)
		for j := range ws {
			if j != a && math.Float64bits(ws[j]) != math.Float64bits(wf[j]) {
				t.Fatalf("trial %d V=%d: res[%d] = %.17g, complete's %.17g", trial, v, j, wf[j], ws[j])
			}
		}
		for _, c := range [][3]any{{"A", fast.bigA, slow.bigA}, {"B", fast.bigB, slow.bigB}, {"r(a)", fast.pa1, slow.pa1}, {"res[a]", wf[a], ws[a]}} {
			if d := math.Abs(c[1].(float64) - c[2].(float64)); d > 1e-12 {
				t.Fatalf("trial %d V=%d: %s = %.17g, complete's %.17g", trial, v, c[0], c[1], c[2])
			}
		}
	}
}
