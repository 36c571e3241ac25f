package algos

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// TestMultipathBlockChainIsBlock: on one chain (k = 1) multipath-block
// is block verification. For seeded random (p, q) with V = 3 and
// γ = 1..3, every chain of tokens is enumerated and its law of (accepted
// length, next token) is compared with Block.Law: total variation
// ≤ 1e-12 on every chain (the rows are q itself, so it is 0 in practice).
func TestMultipathBlockChainIsBlock(t *testing.T) {
	const v = 3
	var tl sim.TreeLaw
	var bl sim.Law
	for seed := uint64(11); seed <= 14; seed++ {
		for gamma := 1; gamma <= 3; gamma++ {
			p := make([][]float64, gamma+1)
			q := make([][]float64, gamma)
			for i := range p {
				p[i] = randomRow(seed, uint64(2*i), v)
				if i < gamma {
					q[i] = randomRow(seed, uint64(2*i+1), v)
				}
			}
			for code := 0; code < int(math.Pow(v, float64(gamma))); code++ {
				toks := make([]int, gamma)
				for i, c := 0, code; i < gamma; i, c = i+1, c/v {
					toks[i] = c % v
				}
				b, tr := chainOf(toks, p, q)
				if err := (Block{}).Law(b, &bl); err != nil {
					t.Fatal(err)
				}
				if err := (MultipathBlock{}).TreeLaw(tr, &tl); err != nil {
					t.Fatal(err)
				}
				tv := 0.0
				for n := 0; n <= gamma; n++ {
					for x := 0; x < v; x++ {
						tv += math.Abs(tl.At(n, x) - bl.At(n, x))
					}
				}
				if tv/2 > 1e-12 {
					t.Fatalf("seed %d γ=%d chain %v: TV(multipath-block, block) = %.3g", seed, gamma, toks, tv/2)
				}
			}
		}
	}
}

// TestMultipathBlockSelectionLaw checks step 2 of MultipathBlock: the
// rows s it verifies against are the law of the path it selects. Every
// tree of k i.i.d. chains is enumerated with its probability; the
// probability that a path is the one selected (summed over the trees)
// must equal the product of s along it, to 1e-12, for every path ever
// selected, and the selected paths' masses must sum to 1. The trees are
// i.i.d. chains and delayed trees (one chain for delay tokens, then k).
func TestMultipathBlockSelectionLaw(t *testing.T) {
	for _, c := range []struct {
		seed           uint64
		v, k, d, delay int
		quality        float64
	}{{21, 3, 2, 2, 0, 0.3}, {22, 3, 3, 2, 0, 0.6}, {23, 4, 3, 2, 0, 0.1}, {24, 3, 2, 3, 0, 0.5}, {25, 4, 4, 1, 0, 0.4},
		{26, 3, 2, 3, 1, 0.3}, {27, 3, 3, 3, 2, 0.5}} {
		pair := treePair(t, c.seed, c.v, c.quality)
		dr := drafterFor(t, sim.DraftIID, pair.Q, c.k, c.d)
		if c.delay > 0 {
			var err error
			if dr, err = draft.NewTree(draft.DraftDelayed, draft.Config{Q: pair.Q, K: c.k, Depth: c.d, Delay: c.delay}); err != nil {
				t.Fatal(err)
			}
		}
		sel := map[string]float64{}
		prod := map[string]float64{}
		err := dr.Enumerate(nil, func(tr *sim.Tree, w float64) error {
			tr.FillTarget(pair.P, nil)
			var g gbvPath
			if err := (MultipathBlock{}).prepare(tr, &g); err != nil {
				return err
			}
			key := fmt.Sprint(g.b.Tokens)
			sel[key] += w
			s := 1.0
			for i, x := range g.b.Tokens {
				s *= g.b.Q[i].At(x)
			}
			if old, ok := prod[key]; ok && math.Abs(old-s) > 1e-15 {
				return fmt.Errorf("path %s: Π s = %.17g in one tree, %.17g in another", key, old, s)
			}
			prod[key] = s
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for key, m := range sel {
			total += m
			if math.Abs(m-prod[key]) > 1e-12 {
				t.Errorf("seed %d V=%d k=%d d=%d path %s: selected w.p. %.15g, Π s = %.15g", c.seed, c.v, c.k, c.d, key, m, prod[key])
			}
		}
		if math.Abs(total-1) > 1e-12 {
			t.Errorf("seed %d: selected paths' mass %.15g", c.seed, total)
		}
	}
}

// TestMultipathBlockLossless: the exact engine finds multipath-block
// lossless (total variation of the first depth+1 tokens ≤ 1e-12) on
// seeded Markov pairs of V = 3..5 with k = 2..4 i.i.d. chains of depth
// 1..3, and its mutant multipath-block-plainq lossy there (TV ≥ 1e-3 on
// every pair: the selection moves the path's law away from q).
func TestMultipathBlockLossless(t *testing.T) {
	for _, c := range []struct {
		seed    uint64
		v, k, d int
		quality float64
	}{{31, 3, 2, 2, 0.3}, {32, 4, 3, 2, 0.5}, {33, 5, 2, 2, 0.2}, {34, 3, 4, 2, 0.6}, {35, 4, 2, 3, 0.4}, {36, 5, 3, 1, 0.0}} {
		pair := treePair(t, c.seed, c.v, c.quality)
		dr := drafterFor(t, sim.DraftIID, pair.Q, c.k, c.d)
		for _, r := range []struct {
			rule   MultipathBlock
			mutant bool
		}{{MultipathBlock{}, false}, {MultipathBlock{plainQ: true}, true}} {
			res, err := sim.ExactTree(pair.P, dr, r.rule, sim.TreeExactConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.mutant && res.TV > 1e-12 {
				t.Errorf("seed %d V=%d k=%d d=%d: TV = %.3g", c.seed, c.v, c.k, c.d, res.TV)
			}
			if r.mutant && res.TV < 1e-3 {
				t.Errorf("mutant seed %d V=%d k=%d d=%d: TV = %.3g, want a clear bias", c.seed, c.v, c.k, c.d, res.TV)
			}
		}
	}
}

// TestMultipathBlockSortLargeV: above radixMin tokens gbvSorted sorts by
// mentored decoding's radix passes; the order must be gbvCmp's (key, then
// token), the one the selection uses. On seeded rows of V = 6,000 with a
// quarter of the tokens planted on one key (p = 2q: ties broken by
// token) and some q = 0 (left out), the order equals slices.SortFunc's
// with gbvCmp, token for token.
func TestMultipathBlockSortLargeV(t *testing.T) {
	const v = 6000
	for seed := uint64(41); seed <= 43; seed++ {
		p, q := randomRow(seed, 0, v), randomRow(seed, 1, v)
		for y := 0; y < v; y += 4 {
			p[y] = 2 * q[y]
		}
		for y := 1; y < v; y += 97 {
			q[y] = 0
		}
		var ms mscratch
		got := gbvSorted(&ms, sim.F64(p), sim.F64(q))
		var want []int
		for y := range v {
			if q[y] > 0 {
				want = append(want, y)
			}
		}
		key := func(y int) float64 { return gbvKey(sim.F64(p), sim.F64(q), y) }
		slices.SortFunc(want, func(a, b int) int { return gbvCmp(key(a), a, key(b), b) })
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d tokens sorted, want %d", seed, len(got), len(want))
		}
		for i, it := range got {
			if int(it.c) != want[i] || it.q != q[want[i]] {
				t.Fatalf("seed %d: position %d holds token %d (q %g), want %d", seed, i, int(it.c), it.q, want[i])
			}
		}
	}
}

// On a seeded Markov pair (V = 4, depth 2), multipath-block's expected
// accepted length grows with the number k of i.i.d. chains; at k = 1 it
// is block verification's, and every k is lossless.
func ExampleMultipathBlock() {
	pair, _ := sim.NewMarkovPair(sim.NewRand(7, sim.StreamID("example/gbv", 0)), sim.MarkovConfig{V: 4, Order: 1, A: 0.7, Quality: 0.4})
	for k := 1; k <= 3; k++ {
		d, _ := draft.NewTree(sim.DraftIID, draft.Config{Q: pair.Q, K: k, Depth: 2})
		res, _ := sim.ExactTree(pair.P, d, MultipathBlock{}, sim.TreeExactConfig{})
		fmt.Printf("k=%d E[accepted] %.4f lossless %v\n", k, res.ExpectedAccepted, res.Lossless)
	}
	blk, _ := sim.Exact(pair, Block{}, sim.ExactConfig{Gamma: 2})
	fmt.Printf("block E[accepted] %.4f\n", blk.ExpectedAccepted)
	// Output:
	// k=1 E[accepted] 1.2979 lossless true
	// k=2 E[accepted] 1.6350 lossless true
	// k=3 E[accepted] 1.8324 lossless true
	// block E[accepted] 1.2979
}
