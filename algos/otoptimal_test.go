package algos

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
)

// OptimalAcceptanceIID (the maximum over the ratio-ordered prefixes) equals
// the exhaustive min-cut search over all 2^V token sets and the max-flow
// over the draft sets, to 1e-12, on Dirichlet pairs with V ≤ 14 and k ≤ 8,
// sparse ones (concentration 0.1, many near-zero entries) included.
func TestOptimalAcceptanceIID(t *testing.T) {
	for _, c := range []struct {
		v, k int
		a    float64
	}{{3, 2, 0.5}, {4, 3, 0.4}, {6, 2, 1}, {6, 8, 0.3}, {8, 4, 0.1}, {10, 3, 2}, {14, 5, 0.4}} {
		p, q := randDist(t, uint64(c.v*31+c.k), c.v, c.a), randDist(t, uint64(c.v*31+c.k+500), c.v, c.a)
		got, err := OptimalAcceptanceIID(p, q, c.k)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := OptimalAcceptanceExhaustive(p, q, c.k, true)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-ex) > 1e-12 {
			t.Errorf("V=%d k=%d: prefix form %.15g, exhaustive %.15g", c.v, c.k, got, ex)
		}
		if c.v <= 8 {
			fl, err := OptimalAcceptanceFlow(p, q, c.k, true)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-fl) > 1e-12 {
				t.Errorf("V=%d k=%d: prefix form %.15g, max-flow %.15g", c.v, c.k, got, fl)
			}
		}
	}
}

// otRootAcceptance is ot-optimal's exact first-position acceptance on the
// context-free pair (p, q) with k i.i.d. drafts: Σ over the multisets of
// draws of their probability times the law's mass on the root's children.
func otRootAcceptance(t *testing.T, r OTOptimal, p, q []float64, k int) (acc float64, emitted []float64) {
	t.Helper()
	pair := sim.Pair{P: sim.Fixed(p), Q: sim.Fixed(q)}
	d := drafterFor(t, sim.DraftIID, pair.Q, k, 1)
	emitted = make([]float64, len(p))
	var law sim.TreeLaw
	err := d.Enumerate(nil, func(tr *sim.Tree, w float64) error {
		tr.FillTarget(pair.P, nil)
		if err := r.TreeLaw(tr, &law); err != nil {
			return err
		}
		for n := range tr.Nodes {
			for y := range len(p) {
				m := w * law.At(n, y)
				if n > 0 { // the first token is the accepted child's
					emitted[tr.Nodes[n].Token] += m
					acc += m
				} else {
					emitted[y] += m
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return acc, emitted
}

// ot-optimal attains α*: its exact first-position acceptance (the mass of
// outcomes that keep a drafted token, enumerated over every multiset of k
// i.i.d. draws) equals the exhaustive min-cut α* to 1e-9 on several (p,
// q, k), and the first emitted token's law is p to 1e-12 (lossless). The
// mutant ot-selected-as-q is biased on the same pairs (TV > 1e-4).
func TestOTOptimalAttainsBound(t *testing.T) {
	for _, c := range []struct {
		v, k int
		a    float64
	}{{3, 2, 0.5}, {4, 3, 0.4}, {5, 2, 1}, {5, 4, 0.3}, {6, 3, 0.1}, {4, 6, 2}, {6, 2, 0.2}} {
		name := fmt.Sprintf("V=%d/k=%d/a=%g", c.v, c.k, c.a)
		p, q := randDist(t, uint64(c.v*7+c.k), c.v, c.a), randDist(t, uint64(c.v*7+c.k+900), c.v, c.a)
		want, err := OptimalAcceptanceExhaustive(p, q, c.k, true)
		if err != nil {
			t.Fatal(err)
		}
		acc, em := otRootAcceptance(t, OTOptimal{}, p, q, c.k)
		if math.Abs(acc-want) > 1e-9 {
			t.Errorf("%s: acceptance %.15g, alpha* %.15g", name, acc, want)
		}
		if tv := sim.TV(em, p); tv > 1e-12 {
			t.Errorf("%s: first token TV %.3g from p", name, tv)
		}
		_, bad := otRootAcceptance(t, OTOptimal{asQ: true}, p, q, c.k)
		if tv := sim.TV(bad, p); tv < 1e-4 {
			t.Errorf("%s: mutant's TV %.3g, want a visible bias", name, tv)
		}
	}
}

// For V in the thousands, where no enumeration runs: ot-optimal's
// selection law v sums to 1 (1e-12) and its acceptance Σ min(p, v) (the
// identity TestOTOptimalAttainsBound checks exactly on small pairs)
// equals the prefix form of α* to 1e-9, on the bench pool's kind of pair
// (p ~ Dirichlet(0.1), q = p·exp(N(0,1)) renormalised) and on two
// independent Dirichlet(0.5) rows.
func TestOTOptimalLargeV(t *testing.T) {
	for _, v := range []int{256, 4096} {
		p := randDist(t, uint64(v), v, 0.1)
		q := make([]float64, v)
		rng := sim.NewRand(9, sim.StreamID("ot-large", uint64(v)))
		for i, x := range p {
			q[i] = x * math.Exp(rng.NormFloat64())
		}
		sim.Normalize(q)
		pairs := [][2][]float64{{p, q}, {randDist(t, uint64(v)+1, v, 0.5), randDist(t, uint64(v)+2, v, 0.5)}}
		for i, pq := range pairs {
			for _, k := range []int{2, 4, 8} {
				pl := newOTPlan(sim.F64(pq[0]), sim.F64(pq[1]), k)
				acc, total := 0.0, 0.0
				for y, vy := range pl.v {
					acc += math.Min(pl.p[y], vy)
					total += vy
				}
				want, err := OptimalAcceptanceIID(pq[0], pq[1], k)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(total-1) > 1e-12 || math.Abs(acc-want) > 1e-9 {
					t.Errorf("V=%d pair %d k=%d: Σv = %.15g, Σmin(p, v) = %.15g, alpha* = %.15g", v, i, k, total, acc, want)
				}
			}
		}
	}
}
