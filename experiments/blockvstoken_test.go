package experiments

import (
	"context"
	"math"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
)

func bvtCell(t *testing.T, cfg Config, source string, beta float64) []Row {
	t.Helper()
	e, err := Lookup("block-vs-token")
	if err != nil {
		t.Fatal(err)
	}
	c := Cell{Key: []KV{{K: "source", V: source}, {K: "beta_target", V: beta}}}
	rows, err := e.Run(context.Background(), cfg, c, CellSeed(cfg.Seed, e.Name, c))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3*bvtMaxGamma {
		t.Fatalf("%d rows, want %d", len(rows), 3*bvtMaxGamma)
	}
	return rows
}

// TestBlockVsTokenExact: on the Markov pairs the draft is calibrated to the
// target mean β, the rows repeat the exact engine, block never loses, and
// it gains from γ = 2 on (Sun et al. Thm 2).
func TestBlockVsTokenExact(t *testing.T) {
	cfg := Config{Seed: 3}
	for _, order := range []int{1, 2} {
		pair, err := bvtMarkovPair(sim.NewRand(cfg.Seed, sim.StreamID("block-vs-token/pair", uint64(order))), order, 0.7)
		if err != nil {
			t.Fatal(err)
		}
		p, q := pair.P.(*sim.Markov), pair.Q.(*sim.Markov)
		mb := 0.0
		for s := range p.Rows {
			mb += sim.Alpha(p.Rows[s], q.Rows[s]) / float64(len(p.Rows))
		}
		if math.Abs(mb-0.7) > 1e-9 {
			t.Errorf("order %d: mean β over states %.12f, want 0.7", order, mb)
		}
		src := []string{"", "markov:V=4,order=1", "markov:V=4,order=2"}[order]
		rows := bvtCell(t, cfg, src, 0.7)
		for _, r := range rows {
			g := int(num(t, r, "gamma"))
			switch r.String("rule") {
			case "token", "block":
				want, err := sim.Exact(pair, map[string]sim.Lawer{"token": algos.Token{}, "block": algos.Block{}}[r.String("rule")], sim.ExactConfig{Gamma: g, L: 1})
				if err != nil {
					t.Fatal(err)
				}
				if m := num(t, r, "mean_emitted"); m != want.ExpectedEmitted || num(t, r, "ci_lo") != m || num(t, r, "ci_hi") != m {
					t.Errorf("order %d γ=%d %s: row %g, exact %g", order, g, r.String("rule"), m, want.ExpectedEmitted)
				}
			case "gain":
				d := num(t, r, "mean_emitted")
				if (g == 1 && math.Abs(d) > 1e-12) || (g >= 2 && !(d > 1e-6)) {
					t.Errorf("order %d γ=%d: gain %g", order, g, d)
				}
			}
			if b := num(t, r, "beta_measured"); !(b > 0.5 && b < 0.9) {
				t.Errorf("order %d γ=%d: draft-path β %g far from the state mean 0.7", order, g, b)
			}
		}
	}
}

// TestBlockVsTokenMC: on the pool, token's Monte Carlo mean agrees with its
// exact expectation given the pool (positions are independent, so
// E = mean_c Σ_k Π_{i<k} β_{c,i}) within 4.5 standard errors (a two-sided
// normal tail of 7e-6 per assertion); with shared coins the two rules make
// identical decisions at γ = 1; the paired gain is positive from γ = 3 on,
// and its interval is narrower than the unpaired one, √(h_token² +
// h_block²) (pairing removes the draft's share of the variance; the coins'
// share remains, so it is not narrower than a single rule's interval).
func TestBlockVsTokenMC(t *testing.T) {
	cfg := Config{Seed: 5, Scale: 0.25, Workers: 1}
	rows := bvtCell(t, cfg, "dirichlet:V=2048", 0.7)
	pl, err := bvtPool(0.7, bvtMaxGamma, sim.StreamID("block-vs-token/pool", cfg.Seed), cfg.MemBudget)
	if err != nil {
		t.Fatal(err)
	}
	var tokHalf, blkHalf [bvtMaxGamma + 1]float64
	for _, r := range rows {
		g := int(num(t, r, "gamma"))
		lo, hi, m := num(t, r, "ci_lo"), num(t, r, "ci_hi"), num(t, r, "mean_emitted")
		se := (hi - lo) / 2 / 1.959964
		switch r.String("rule") {
		case "token":
			exact := 0.0
			for c := 0; c < pl.Contexts; c++ {
				reach := 1.0
				for i := 0; i <= g; i++ {
					exact += reach / float64(pl.Contexts)
					if i < g {
						p, q := pl.PRow(c, i), pl.QRow(c, i)
						b := 0.0
						for x := range p {
							b += math.Min(float64(p[x]), float64(q[x]))
						}
						reach *= b
					}
				}
			}
			if math.Abs(m-exact) > 4.5*se {
				t.Errorf("γ=%d: token MC %.4f ± %.4f, exact given the pool %.4f", g, m, se, exact)
			}
			tokHalf[g] = (hi - lo) / 2
		case "block":
			blkHalf[g] = (hi - lo) / 2
		case "gain":
			if g == 1 && (m != 0 || hi != 0) {
				t.Errorf("γ=1: gain %g [%g, %g], want exactly 0 with shared coins", m, lo, hi)
			}
			if g >= 3 && !(lo > 0) {
				t.Errorf("γ=%d: gain interval [%g, %g] does not exclude 0", g, lo, hi)
			}
			if un := math.Hypot(tokHalf[g], blkHalf[g]); g >= 2 && !((hi-lo)/2 < un) {
				t.Errorf("γ=%d: paired gain half-width %g not below the unpaired %g", g, (hi-lo)/2, un)
			} else {
				t.Logf("γ=%d: gain %.4f, paired half-width %.4f, unpaired %.4f", g, m, (hi-lo)/2, un)
			}
		}
	}
}

func TestBlockVsTokenGrid(t *testing.T) {
	e, err := Lookup("block-vs-token")
	if err != nil {
		t.Fatal(err)
	}
	cells, err := e.Cells(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 3*7 {
		t.Errorf("%d cells, want 21", len(cells))
	}
}
