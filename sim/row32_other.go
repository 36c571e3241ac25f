//go:build !amd64

package sim

const useAVX2 = false

// residualBlocks32 writes the block sums of (w·p - q)+ for the first
// len(sums) blocks of 64 entries into sums and returns their total.
func residualBlocks32(w float32, p, q []float32, sums []float32) float64 {
	return residualBlocks32Go(w, p, q, sums)
}
