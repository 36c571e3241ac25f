package experiments

import (
	"context"
	"math"
	"testing"
)

// fms-example (fms-extras issue 12): the naive scheme's exact P(first = a). Each
// a-candidate independently verifies 0, 1, 2 tokens with probabilities
// 1/2, 1/2·3/4, 1/2·1/4; "e f" with 1/2, 1/4, 1/4. 'a' comes first iff the
// best a-candidate verified 2 tokens, or 1 while "e f" verified ≤ 1 (ties
// go to the lower index); if every candidate verified 0 tokens the winner
// "a b" emits its own sample, which is e. So
//
//	P = (1 - (7/8)³) + ((7/8)³ - 1/8)·3/4 = 169/512 + 279/512·3/4 = 1513/2048,
//
// not the back-of-envelope 87.5%. Shared-uniform sampling gives
// exactly p(a) = 1/2.
func TestFMSExample(t *testing.T) {
	for _, c := range []struct {
		algo string
		want float64
	}{{"naive", 1513.0 / 2048}, {"shared-uniform", 0.5}} {
		row, err := Scenario(context.Background(), "fms-example", c.algo, 20000, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		exact, _ := row.Float("p_first_a_exact")
		lo, _ := row.Float("ci_lo")
		hi, _ := row.Float("ci_hi")
		if math.Abs(exact-c.want) > 1e-15 {
			t.Errorf("%s: exact P(first = a) = %.17g, want %.17g", c.algo, exact, c.want)
		}
		if !(lo <= exact && exact <= hi) {
			t.Errorf("%s: simulation interval [%.5f, %.5f] misses the exact %.6f", c.algo, lo, hi, exact)
		}
	}
}

// fms-coverage (the fms-extras note's second example): verifying only the best
// candidate accepts the first token w.p. p(a) = 1/4; shared-uniform
// sampling w.p. p({a, c, e, g}) = 1 (to 1e-12: the law is a sum of masses).
func TestFMSCoverage(t *testing.T) {
	for _, c := range []struct {
		algo string
		want float64
	}{{"best-candidate", 0.25}, {"shared-uniform", 1}} {
		row, err := Scenario(context.Background(), "fms-coverage", c.algo, 4000, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		exact, _ := row.Float("first_accepted_exact")
		lo, _ := row.Float("ci_lo")
		hi, _ := row.Float("ci_hi")
		if math.Abs(exact-c.want) > 1e-12 || !(lo <= exact && exact <= hi) {
			t.Errorf("%s: exact %.17g (want %g), interval [%.4f, %.4f]", c.algo, exact, c.want, lo, hi)
		}
	}
}

// The multidraft experiment on the Khisti toy: every rule lossless, never
// above its bound, monotone bounds in k, and at k = 1 every rule (except
// target-only, whose single child is deterministic) equals Σ min(p, q).
func TestMultidraftKhisti(t *testing.T) {
	cfg := Config{Seed: 1, Workers: 1}
	for _, k := range []int64{1, 3} {
		rows, err := multidraftRun(context.Background(), cfg, Cell{Key: []KV{{K: "pair", V: "khisti-q2=0.1"}, {K: "k", V: k}}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(MultidraftRules) {
			t.Fatalf("%d rows", len(rows))
		}
		for _, r := range rows {
			acc, _ := r.Float("acceptance")
			bound, _ := r.Float("bound")
			if ll, _ := r.Get("lossless"); ll != true {
				t.Errorf("k=%d %s not lossless", k, r.String("verifier"))
			}
			if acc > bound+1e-12 {
				t.Errorf("k=%d %s: acceptance %.15g above bound %.15g", k, r.String("verifier"), acc, bound)
			}
			// Σ min(1/3, q) for q = (1/3, 0.1, 0.5667) = 1/3 + 0.1 + 1/3.
			if k == 1 && r.String("verifier") != "target-only" && math.Abs(acc-(2.0/3+0.1)) > 1e-12 {
				t.Errorf("k=1 %s: acceptance %.15g, want Σmin = 0.766667", r.String("verifier"), acc)
			}
		}
	}
}

// Regression: drafters keep their scratch in the tree, so Monte Carlo with
// several workers sharing one drafter is exact. Greedy drafts with k = 8 ≥
// V cover the whole support of q, and the Markov pair's root q has full
// support, so every trial accepts its first token (acceptance exactly 1).
func TestMultidraftConcurrentDrafting(t *testing.T) {
	rows, err := multidraftRun(context.Background(), Config{Seed: 1, Workers: 4, Scale: 0.25}, Cell{Key: []KV{{K: "pair", V: "markov"}, {K: "k", V: int64(8)}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.String("verifier") == "greedy-draft" {
			if acc, _ := r.Float("acceptance"); acc != 1 {
				t.Errorf("greedy-draft with k = 8 on V = 4: acceptance %.6f, want exactly 1", acc)
			}
		}
	}
}
