package data

import (
	"math"
	"testing"
)

// TestTransform checks each filter on p = (1/2, 1/4, 1/8, 1/8) given as
// log-probabilities; data/logger/test_logger.py asserts the same values
// for the Python logger's transform. Reference values by hand:
// temperature 0.5 squares and renormalises (16, 4, 1, 1)/22; top-k keeps
// ties at the threshold; top-p keeps a token iff the mass before it is
// below P; min-p keeps weights ≥ MinP·max.
func TestTransform(t *testing.T) {
	l := []float32{float32(math.Log(0.5)), float32(math.Log(0.25)), float32(math.Log(0.125)), float32(math.Log(0.125))}
	cases := []struct {
		s    Sampling
		want []float64
	}{
		{Sampling{Temperature: 1, TopP: 1}, []float64{0.5, 0.25, 0.125, 0.125}},
		{Sampling{Temperature: 0.5, TopP: 1}, []float64{16.0 / 22, 4.0 / 22, 1.0 / 22, 1.0 / 22}},
		{Sampling{Temperature: 1, TopK: 3, TopP: 1}, []float64{0.5, 0.25, 0.125, 0.125}},
		{Sampling{Temperature: 1, TopK: 2, TopP: 1}, []float64{2.0 / 3, 1.0 / 3, 0, 0}},
		{Sampling{Temperature: 1, TopP: 0.6}, []float64{2.0 / 3, 1.0 / 3, 0, 0}},
		{Sampling{Temperature: 1, TopP: 0.5}, []float64{1, 0, 0, 0}},
		{Sampling{Temperature: 1, TopP: 1, MinP: 0.3}, []float64{2.0 / 3, 1.0 / 3, 0, 0}},
		{Sampling{Temperature: 0, TopP: 1}, []float64{1, 0, 0, 0}},
		{Sampling{Temperature: 2, TopK: 3, TopP: 0.9, MinP: 0.1}, nil}, // combined: only checked to be a distribution
	}
	var tr Transformer
	dst := make([]float32, 4)
	for _, c := range cases {
		if err := tr.Apply(c.s, dst, l); err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for x, v := range dst {
			s += float64(v)
			if c.want != nil && math.Abs(float64(v)-c.want[x]) > 1e-6 {
				t.Errorf("%s: got %v, want %v", c.s, dst, c.want)
				break
			}
		}
		if math.Abs(s-1) > 1e-6 {
			t.Errorf("%s: sums to %g", c.s, s)
		}
	}
	// Greedy picks the lowest index on ties; -Inf logits are excluded.
	if err := tr.Apply(Sampling{TopP: 1}, dst[:3], []float32{0, 2, 2}); err != nil || dst[1] != 1 {
		t.Errorf("greedy tie: %v %v", dst[:3], err)
	}
	inf := float32(math.Inf(-1))
	if err := tr.Apply(Sampling{Temperature: 1, TopP: 1}, dst[:2], []float32{0, inf}); err != nil || dst[1] != 0 || dst[0] != 1 {
		t.Errorf("-Inf logit: %v %v", dst[:2], err)
	}
	for _, bad := range [][]float32{{float32(math.NaN()), 0}, {float32(math.Inf(1)), 0}, {inf, inf}} {
		if err := tr.Apply(Sampling{Temperature: 1, TopP: 1}, dst[:2], bad); err == nil {
			t.Errorf("logits %v accepted", bad)
		}
	}
	for _, s := range []Sampling{{Temperature: -1, TopP: 1}, {Temperature: 1, TopP: 0}, {Temperature: 1, TopP: 1, MinP: 1}, {Temperature: 1, TopP: 1, TopK: -1}, {Temperature: math.NaN(), TopP: 1}} {
		if s.Validate() == nil {
			t.Errorf("%+v validated", s)
		}
	}
}

// TestKth checks quickselect against sorting on ties and random data.
func TestKth(t *testing.T) {
	a := []float64{3, 1, 2, 2, 5, 0, 2}
	want := []float64{0, 1, 2, 2, 2, 3, 5}
	for k := range a {
		b := append([]float64(nil), a...)
		if got := kth(b, k); got != want[k] {
			t.Errorf("kth(%d) = %g, want %g", k, got, want[k])
		}
	}
}

// TestBF16 checks round-to-nearest-even to bfloat16.
func TestBF16(t *testing.T) {
	for _, c := range [][2]float32{{1, 1}, {1.00390625, 1}, {1.01171875, 1.015625}, {-2.5, -2.5}} {
		if got := bf16(c[0]); got != c[1] {
			t.Errorf("bf16(%v) = %v, want %v", c[0], got, c[1])
		}
	}
}
