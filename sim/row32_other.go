//go:build !amd64

package sim

// kernel32 is the block kernel of this machine: the pure-Go one, which
// adds in the amd64 assembly kernel's order (same bits everywhere).
var kernel32 = kernelGo

// blocks runs the pure-Go kernel: there is no assembly kernel here.
func (blockKernel) blocks(w float32, p, q []float32, sums []float32) float64 {
	return residualBlocks32Go(w, p, q, sums)
}
