package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
)

// randRow32 appends v entries to dst: a fifth zeros, the rest exponential
// times a power of two in 2^-20..2^4, so sums cross many binades and
// rounding differs with the order of addition.
func randRow32(rng *rand.Rand, dst []float32, v int) []float32 {
	for range v {
		x := 0.0
		if rng.IntN(5) != 0 {
			x = math.Ldexp(rng.ExpFloat64(), rng.IntN(25)-20)
		}
		dst = append(dst, float32(x))
	}
	return dst
}

func normalize32(r []float32) {
	s := 0.0
	for _, x := range r {
		s += float64(x)
	}
	for i := range r {
		r[i] = float32(float64(r[i]) / s)
	}
}

// TestKernelsMatchFloat64: every kernel this machine runs gives the
// residual mass Σ (p - q)+ within 1e-5 relative of the float64 sum (the
// float32 block sums' bound 16·2^-24 per block, with room).
func TestKernelsMatchFloat64(t *testing.T) {
	for name, k := range testKernels() {
		rng := rand.New(rand.NewPCG(9, 9))
		for range 100 {
			v := 1 + rng.IntN(5000)
			p, q := make([]float32, v), make([]float32, v)
			for i := range p {
				p[i], q[i] = float32(rng.Float64()), float32(rng.Float64())
			}
			got := residualMass32K(k, 1, p, q)
			want := 0.0
			for i := range p {
				want += math.Max(0, float64(p[i])-float64(q[i]))
			}
			if math.Abs(got-want) > 1e-5*want {
				t.Fatalf("%s: residual mass %.9g, float64 %.9g (V=%d)", name, got, want, v)
			}
		}
	}
}

// TestKernelGoldenBits pins the pure-Go kernel's bits on fixed rows, so a
// machine whose compiler reorders or fuses the float32 arithmetic (which
// would break bit-identical results across machines) fails here even
// without an assembly kernel to compare with. The checksum was recorded on
// amd64, where TestKernelsBitIdentical ties it to the AVX2 kernel.
func TestKernelGoldenBits(t *testing.T) {
	const want = "45bdec14917055bb"
	rng := rand.New(rand.NewPCG(21, 22))
	h := fnv.New64a()
	sums := make([]float32, 8)
	for it := range 2000 {
		nb := 1 + rng.IntN(8)
		p, q := randRow32(rng, nil, nb*block32), randRow32(rng, nil, nb*block32)
		w := float32(1)
		if it%2 == 1 {
			w = float32(rng.Float64())
		}
		m := residualBlocks32Go(w, p, q, sums[:nb])
		for _, s := range sums[:nb] {
			fmt.Fprintf(h, "%x,", math.Float32bits(s))
		}
		fmt.Fprintf(h, "%x;", math.Float64bits(m))
	}
	if got := fmt.Sprintf("%016x", h.Sum64()); got != want {
		t.Fatalf("pure-Go kernel checksum %s, want %s: its float32 summation order changed", got, want)
	}
}

// BenchmarkResidualBlocks32 times each kernel on a 32768-token row (512
// blocks); bytes/s counts p and q.
func BenchmarkResidualBlocks32(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const v = 32768
	p, q := randRow32(rng, nil, v), randRow32(rng, nil, v)
	sums := make([]float32, v/block32)
	for name, k := range testKernels() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(2 * 4 * v)
			for b.Loop() {
				k.blocks(0.9, p, q, sums)
			}
		})
	}
}
