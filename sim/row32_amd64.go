package sim

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly block kernel (row32_amd64.s); tests turn it
// off to check the pure-Go kernel on the same inputs.
var useAVX2 = hasAVX2()

func hasAVX2() bool { return cpu.X86.HasAVX2 }

//go:noescape
func residualBlocks32AVX2(w float32, p, q, sums []float32) float64

// residualBlocks32 writes the block sums of (w·p - q)+ for the first
// len(sums) blocks of 64 entries into sums and returns their total.
func residualBlocks32(w float32, p, q []float32, sums []float32) float64 {
	if useAVX2 && len(sums) > 0 {
		_ = p[len(sums)*block32-1]
		_ = q[len(sums)*block32-1]
		return residualBlocks32AVX2(w, p, q, sums)
	}
	return residualBlocks32Go(w, p, q, sums)
}
