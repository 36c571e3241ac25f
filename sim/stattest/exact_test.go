package stattest

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/internal/binenc"
)

// TestExactSum: the sum is exact and correctly rounded (ten 0.1s, whose
// exact sum is 1 + 5.55e-17, round to 1; 1e16 + 1 - 1e16 is 1 where a
// float64 sum gives 0; subnormals and signs add exactly), does not depend
// on the order of its terms, and survives its binary form.
func TestExactSum(t *testing.T) {
	var s ExactSum
	for range 10 {
		s.Add(0.1)
	}
	if s.Float64() != 1 {
		t.Errorf("ten 0.1s: %v", s.Float64())
	}
	var c ExactSum
	for _, x := range []float64{1e16, 1, -1e16, 5e-324, 5e-324, -5e-324} {
		c.Add(x)
	}
	if c.Float64() != 1 {
		t.Errorf("1e16 + 1 - 1e16 + tiny: %v", c.Float64())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 1000)
	ref := new(big.Float).SetPrec(4000)
	for i := range xs {
		xs[i] = (rng.Float64() - 0.3) * math.Pow(2, float64(rng.IntN(200)-100))
		ref.Add(ref, new(big.Float).SetFloat64(xs[i]))
	}
	want, _ := ref.Float64()
	for trial := range 5 {
		rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		var a, b ExactSum // two halves summed apart, then together
		for i, x := range xs {
			if i%(trial+2) == 0 {
				a.Add(x)
			} else {
				b.Add(x)
			}
		}
		a.AddSum(&b)
		if a.Float64() != want {
			t.Fatalf("order %d: %v, want %v", trial, a.Float64(), want)
		}
		var back ExactSum
		r := binenc.NewReader(a.AppendBinary(nil), 0)
		if ReadExactSum(r, &back); r.Err() != nil || back.Float64() != want || r.Len() != 0 {
			t.Fatalf("binary form: %v, %v", back.Float64(), r.Err())
		}
	}
}

// TestHeteroSum: chunks' AddBlocks accumulators summed exactly give
// bit-identical tests in any order and grouping (forward into one sum;
// backward into two sums then added), and the test of one accumulator
// that saw every observation up to the rounding of the moments (the
// statistic to 1e-9 relative).
func TestHeteroSum(t *testing.T) {
	width := []int{3, 3, 1}
	rng := rand.New(rand.NewPCG(5, 6))
	one := NewHetero(7)
	var chunks []*Hetero
	for i := range 3000 {
		m := []float64{rng.Float64(), rng.Float64(), rng.Float64() * 0.2}
		s := m[0] + m[1] + m[2]
		for j := range m {
			m[j] /= s
		}
		cell := rng.IntN(7)
		if i%7 == 0 {
			chunks = append(chunks, NewHetero(7))
		}
		chunks[len(chunks)-1].AddBlocks(width, m, cell)
		one.AddBlocks(width, m, cell)
	}
	fwd, a, b := NewHeteroSum(7), NewHeteroSum(7), NewHeteroSum(7)
	for i, h := range chunks {
		if err := fwd.AddHetero(h); err != nil {
			t.Fatal(err)
		}
		half := a
		if i%3 == 0 {
			half = b
		}
		if err := half.AddHetero(chunks[len(chunks)-1-i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddSum(a); err != nil {
		t.Fatal(err)
	}
	got, regrouped, direct := fwd.Hetero().Test(0), b.Hetero().Test(0), one.Test(0)
	if got != regrouped {
		t.Errorf("forward: %+v; regrouped: %+v", got, regrouped)
	}
	if math.Abs(got.Stat-direct.Stat) > 1e-9*direct.Stat || got.DF != direct.DF || got.N != direct.N || got.N != 3000 {
		t.Errorf("summed %+v, direct %+v", got, direct)
	}
	if err := fwd.AddHetero(NewHetero(5)); err == nil {
		t.Error("a Hetero of 5 cells was added to a sum of 7")
	}
}
