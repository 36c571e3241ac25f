package sim

// Kernels for float32 rows, the hot path of logged and synthetic large
// vocabularies. Sums run inside blocks of block32 entries in float32 and
// across blocks in float64. Per block the float32 partial sums carry a
// relative rounding error below 16·2^-24 ≈ 1e-6, of the order of the rows'
// own float32 storage precision; float64 rows use the exact float64
// kernels in row.go. The block sums of the residual (w·p - q)+ come from a
// blockKernel: on amd64 with AVX2 an assembly kernel (row32_amd64.s, eight
// lanes), elsewhere the pure-Go one, which adds in exactly the assembly
// kernel's order so that a seed gives bit-identical numbers on every
// machine. Every product w·p is rounded to float32 by an explicit
// conversion, which forbids the compiler to fuse it into a multiply-add
// (as it may on arm64, ppc64, s390x and riscv64). Sampling skips whole
// blocks whose mass does not reach the target and scans only the block
// that does, in float64.

const block32 = 64

// blockKernel names a block kernel: its blocks method writes the block
// sums of (w·p - q)+ for the first len(sums) blocks of block32 entries into
// sums and returns their total in float64. Every kernel adds in the order
// residualBlocks32Go documents, so all give the same bits. The caller
// guarantees len(p), len(q) ≥ block32·len(sums). It is a name, not a func
// value, so that blocks makes direct calls: through a func value escape
// analysis would move the callers' stack arrays of sums to the heap.
type blockKernel uint8

// The block kernels.
const (
	kernelGo   blockKernel = iota // residualBlocks32Go
	kernelAVX2                    // row32_amd64.s (amd64 with AVX2 only)
)

// residualMass32, sampleResidual32 and sampleResidualMass32 run their K
// forms with this machine's kernel, kernel32.
func residualMass32(w float32, p, q []float32) float64 { return residualMass32K(kernel32, w, p, q) }

func sampleResidual32(target float64, w float32, p, q []float32) int {
	return sampleResidual32K(kernel32, target, w, p, q)
}

func sampleResidualMass32(u float64, w float32, p, q []float32) (int, float64) {
	return sampleResidualMass32K(kernel32, u, w, p, q)
}

// residualMass32K returns Σ (w·p - q)+ = Σ (w·p - min(w·p, q)), from the
// block kernel k in chunks of maxBlocks32 blocks plus a scalar tail.
func residualMass32K(k blockKernel, w float32, p, q []float32) float64 {
	q = q[:len(p)]
	var sums [maxBlocks32]float32
	var mass float64
	nb := len(p) / block32
	for b := 0; b < nb; b += maxBlocks32 {
		n := min(maxBlocks32, nb-b)
		mass += k.blocks(w, p[b*block32:], q[b*block32:], sums[:n])
	}
	for i := nb * block32; i < len(p); i++ {
		a := float32(w * p[i])
		mass += float64(a - min(a, q[i]))
	}
	return mass
}

// sampleResidual32K returns the first x whose cumulative (w·p - q)+ exceeds
// target, the last positive entry if rounding leaves the target beyond the
// total, or -1 if there is none. Block sums are computed chunk by chunk,
// so the scan stops within a chunk of the crossing.
func sampleResidual32K(k blockKernel, target float64, w float32, p, q []float32) int {
	q = q[:len(p)]
	const chunk = 256 // blocks per chunk
	var sums [chunk]float32
	c := 0.0
	nb := len(p) / block32
	for b := 0; b < nb; b += chunk {
		n := min(chunk, nb-b)
		k.blocks(w, p[b*block32:], q[b*block32:], sums[:n])
		var x int
		if x, c = pickBlocks32(c, target, w, p, q, b*block32, sums[:n]); x >= 0 {
			return x
		}
	}
	return finishResidual32(c, target, w, p, q, nb*block32)
}

// pickBlocks32 continues an inverse-CDF scan at cumulative c over the
// blocks starting at entry base whose sums are given: it returns the entry
// where the cumulative residual first exceeds target, or -1 and the
// cumulative after the blocks. Only the block holding the crossing is
// scanned entry by entry.
func pickBlocks32(c, target float64, w float32, p, q []float32, base int, sums []float32) (int, float64) {
	for b, s := range sums {
		bs := float64(s)
		if c+bs <= target {
			c += bs
			continue
		}
		for i := base + b*block32; i < base+(b+1)*block32; i++ {
			if a := float32(w * p[i]); a > q[i] {
				c += float64(a - q[i])
				if c > target {
					return i, c
				}
			}
		}
	}
	return -1, c
}

// finishResidual32 scans the entries from `from` on, then falls back to
// the last entry with a positive residual (rounding), or -1.
func finishResidual32(c, target float64, w float32, p, q []float32, from int) int {
	for i := from; i < len(p); i++ {
		if a := float32(w * p[i]); a > q[i] {
			c += float64(a - q[i])
			if c > target {
				return i
			}
		}
	}
	for i := len(p) - 1; i >= 0; i-- {
		if float32(w*p[i]) > q[i] {
			return i
		}
	}
	return -1
}

// sampleRow32 is the inverse-CDF sample of a float32 row at u.
func sampleRow32(u float64, p []float32) int {
	c := 0.0
	i := 0
	for ; i+block32 <= len(p); i += block32 {
		pp := p[i : i+block32 : i+block32]
		var s0, s1, s2, s3 float32
		for j := 0; j < block32; j += 4 {
			s0 += pp[j]
			s1 += pp[j+1]
			s2 += pp[j+2]
			s3 += pp[j+3]
		}
		bs := float64((s0 + s1) + (s2 + s3))
		if c+bs <= u {
			c += bs
			continue
		}
		for j, v := range pp {
			c += float64(v)
			if c > u && v > 0 {
				return i + j
			}
		}
	}
	for ; i < len(p); i++ {
		c += float64(p[i])
		if c > u && p[i] > 0 {
			return i
		}
	}
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] > 0 {
			return i
		}
	}
	return -1
}

// maxBlocks32 bounds the block sums SampleResidualMass keeps on the stack
// (16 KiB): vocabularies up to 262144 tokens take the one-pass path.
const maxBlocks32 = 4096

// residualBlocks32Go is the pure-Go block kernel. It adds in the order of
// the eight-lane assembly kernel: with d_j = a_j - min(a_j, q_j) and
// a_j = float32(w·p_j) for the entries j = 0..63 of a block, lane l
// (l = 0..7) holds the entries l, l+8, ..., l+56 and sums them as
//
//	s_l = ((d_l + d_{l+8}) + (d_{l+16} + d_{l+24})) + ((d_{l+32} + d_{l+40}) + (d_{l+48} + d_{l+56})),
//
// and the block sum is ((s_0 + s_4) + (s_1 + s_5)) + ((s_2 + s_6) + (s_3 + s_7)),
// all in float32 (IEEE addition is commutative, so only the grouping
// matters). The blocks' total is accumulated in float64, block by block.
func residualBlocks32Go(w float32, p, q []float32, sums []float32) float64 {
	var mass float64
	for b := range sums {
		i := b * block32
		pp, qq := p[i:i+block32:i+block32], q[i:i+block32:i+block32]
		var d [block32]float32
		for j := range d {
			a := float32(w * pp[j])
			d[j] = a - min(a, qq[j])
		}
		var s [8]float32
		for l := range s {
			s[l] = ((d[l] + d[l+8]) + (d[l+16] + d[l+24])) + ((d[l+32] + d[l+40]) + (d[l+48] + d[l+56]))
		}
		sum := ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]))
		sums[b] = sum
		mass += float64(sum)
	}
	return mass
}

// sampleResidualMass32K is SampleResidualMass for float32 rows: one pass
// computes the block sums and the mass, the block holding the target is
// found from the sums, and only that block is scanned again.
func sampleResidualMass32K(k blockKernel, u float64, w float32, p, q []float32) (int, float64) {
	nb := len(p) / block32
	if nb > maxBlocks32 {
		m := residualMass32K(k, w, p, q)
		return sampleResidual32K(k, u*m, w, p, q), m
	}
	var sums [maxBlocks32]float32
	mass := k.blocks(w, p, q[:len(p)], sums[:nb])
	tail := nb * block32
	for i := tail; i < len(p); i++ {
		if a := float32(w * p[i]); a > q[i] {
			mass += float64(a - q[i])
		}
	}
	target := u * mass
	x, c := pickBlocks32(0, target, w, p, q, 0, sums[:nb])
	if x < 0 {
		x = finishResidual32(c, target, w, p, q, tail)
	}
	return x, mass
}
