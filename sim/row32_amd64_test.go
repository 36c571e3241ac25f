package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// testKernels are the block kernels this machine can run, by name.
func testKernels() map[string]blockKernel {
	ks := map[string]blockKernel{"go": kernelGo}
	if cpu.X86.HasAVX2 {
		ks["avx2"] = kernelAVX2
	}
	return ks
}

// TestKernelsBitIdentical: the AVX2 assembly kernel and the pure-Go kernel
// give the same bits (block sums, total, and the residual sample and mass
// built on them) on 100,000 random rows: 1 to 6 blocks plus a tail, with
// zeros, entries spread over many binades, normalised rows and raw ones,
// w = 1 and w < 1.
func TestKernelsBitIdentical(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2 on this CPU: only the pure-Go kernel runs here")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const rows = 100000
	// Rows are windows at random offsets of one random pool (drawing
	// every entry afresh would dominate the test's time), copied so a
	// third of them can be normalised.
	pool := randRow32(rng, nil, 1<<20)
	p, q := make([]float32, 7*block32), make([]float32, 7*block32)
	sa, sg := make([]float32, 6), make([]float32, 6)
	for it := range rows {
		nb := 1 + rng.IntN(6)
		v := nb*block32 + rng.IntN(block32)
		p, q = p[:v], q[:v]
		copy(p, pool[rng.IntN(len(pool)-v):])
		copy(q, pool[rng.IntN(len(pool)-v):])
		if it%3 == 0 {
			normalize32(p)
			normalize32(q)
		}
		w := float32(1)
		if it%2 == 1 {
			w = float32(rng.Float64())
		}
		ma := residualBlocks32AVX2Checked(w, p, q, sa[:nb])
		mg := residualBlocks32Go(w, p, q, sg[:nb])
		for b := range nb {
			if math.Float32bits(sa[b]) != math.Float32bits(sg[b]) {
				t.Fatalf("row %d block %d: avx2 %.9g (%#x), go %.9g (%#x)", it, b, sa[b], math.Float32bits(sa[b]), sg[b], math.Float32bits(sg[b]))
			}
		}
		if math.Float64bits(ma) != math.Float64bits(mg) {
			t.Fatalf("row %d: total avx2 %.17g, go %.17g", it, ma, mg)
		}
		if it%10 == 0 {
			u := rng.Float64()
			xa, za := sampleResidualMass32K(kernelAVX2, u, w, p, q)
			xg, zg := sampleResidualMass32K(kernelGo, u, w, p, q)
			if xa != xg || math.Float64bits(za) != math.Float64bits(zg) {
				t.Fatalf("row %d: residual sample avx2 (%d, %.17g), go (%d, %.17g)", it, xa, za, xg, zg)
			}
		}
	}
}
