package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAVX2Kernel: the assembly block sums equal the pure-Go ones up to
// float32 reassociation (eight lanes instead of four accumulators): a
// relative 1e-5 per block, on rows with zeros and w in {1, 0.37}.
func TestAVX2Kernel(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU: the pure-Go kernel is in use")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for it := 0; it < 200; it++ {
		nb := 1 + rng.IntN(300)
		p, q := make([]float32, nb*block32+rng.IntN(64)), make([]float32, 0)
		for i := range p {
			p[i] = float32(rng.ExpFloat64())
			if rng.IntN(5) == 0 {
				p[i] = 0
			}
		}
		q = append(q, p...)
		for i := range q {
			q[i] *= float32(rng.ExpFloat64())
		}
		w := []float32{1, 0.37}[it%2]
		a, b := make([]float32, nb), make([]float32, nb)
		ma := residualBlocks32AVX2(w, p, q, a)
		mb := residualBlocks32Go(w, p, q, b)
		for i := range a {
			if math.Abs(float64(a[i]-b[i])) > 1e-5*math.Max(float64(b[i]), 1e-6) {
				t.Fatalf("block %d of %d: asm %.9g, Go %.9g", i, nb, a[i], b[i])
			}
		}
		if math.Abs(ma-mb) > 1e-5*mb {
			t.Fatalf("mass: asm %.12g, Go %.12g", ma, mb)
		}
	}
}

// TestKernelsGo runs the kernel checks of row_test.go with the pure-Go
// block kernel.
func TestKernelsGo(t *testing.T) {
	useAVX2 = false
	defer func() { useAVX2 = hasAVX2() }()
	rng := rand.New(rand.NewPCG(9, 9))
	for it := 0; it < 100; it++ {
		v := 1 + rng.IntN(5000)
		p, q := make([]float32, v), make([]float32, v)
		for i := range p {
			p[i], q[i] = float32(rng.Float64()), float32(rng.Float64())
		}
		got := residualMass32(1, p, q)
		want := 0.0
		for i := range p {
			want += math.Max(0, float64(p[i])-float64(q[i]))
		}
		if math.Abs(got-want) > 1e-5*want {
			t.Fatalf("pure-Go residual mass %.9g, float64 %.9g (V=%d)", got, want, v)
		}
	}
}
