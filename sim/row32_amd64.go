package sim

import "golang.org/x/sys/cpu"

// kernel32 is the block kernel of this machine, chosen once: the assembly
// kernel where the CPU has AVX2, else the pure-Go one. Both give the same
// bits (TestKernelsBitIdentical).
var kernel32 = func() blockKernel {
	if cpu.X86.HasAVX2 {
		return kernelAVX2
	}
	return kernelGo
}()

func (k blockKernel) blocks(w float32, p, q []float32, sums []float32) float64 {
	if k == kernelAVX2 {
		return residualBlocks32AVX2Checked(w, p, q, sums)
	}
	return residualBlocks32Go(w, p, q, sums)
}

//go:noescape
func residualBlocks32AVX2(w float32, p, q, sums []float32) float64

// residualBlocks32AVX2Checked is the assembly kernel behind Go's bounds
// checks (the assembly reads 64·len(sums) entries of p and q unchecked).
func residualBlocks32AVX2Checked(w float32, p, q []float32, sums []float32) float64 {
	if len(sums) == 0 {
		return 0
	}
	_ = p[len(sums)*block32-1]
	_ = q[len(sums)*block32-1]
	return residualBlocks32AVX2(w, p, q, sums)
}
