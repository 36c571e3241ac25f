package sim

// Kernels for float32 rows, the hot path of logged and synthetic large
// vocabularies. Go does not vectorise, so they are written for the scalar
// pipeline: float32 arithmetic inside blocks of block32 entries with four
// independent accumulators (no loop-carried dependency on one register),
// and float64 across blocks. Per block the float32 partial sums carry a
// relative rounding error below 16·2^-24 ≈ 1e-6, of the order of the rows'
// own float32 storage precision; float64 rows use the exact float64
// kernels in row.go. On amd64 with AVX2 the block sums come from an
// assembly kernel (row32_amd64.s, eight lanes, the same blocks); the pure-Go
// kernel is the fallback and the tests' oracle. Sampling skips whole blocks whose mass does not reach
// the target and scans only the block that does, in float64.

const block32 = 64

// residualMass32 returns Σ (w·p - q)+ = Σ (w·p - min(w·p, q)), from the
// block kernel in chunks of maxBlocks32 blocks plus a scalar tail.
func residualMass32(w float32, p, q []float32) float64 {
	q = q[:len(p)]
	var sums [maxBlocks32]float32
	var mass float64
	nb := len(p) / block32
	for b := 0; b < nb; b += maxBlocks32 {
		n := min(maxBlocks32, nb-b)
		mass += residualBlocks32(w, p[b*block32:], q[b*block32:], sums[:n])
	}
	for i := nb * block32; i < len(p); i++ {
		a := w * p[i]
		mass += float64(a - min(a, q[i]))
	}
	return mass
}

// sampleResidual32 returns the first x whose cumulative (w·p - q)+ exceeds
// target, the last positive entry if rounding leaves the target beyond the
// total, or -1 if there is none. Block sums are computed chunk by chunk,
// so the scan stops within a chunk of the crossing.
func sampleResidual32(target float64, w float32, p, q []float32) int {
	q = q[:len(p)]
	const chunk = 256 // blocks per chunk
	var sums [chunk]float32
	c := 0.0
	nb := len(p) / block32
	for b := 0; b < nb; b += chunk {
		n := min(chunk, nb-b)
		residualBlocks32(w, p[b*block32:], q[b*block32:], sums[:n])
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
			if a := w * p[i]; a > q[i] {
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
		if a := w * p[i]; a > q[i] {
			c += float64(a - q[i])
			if c > target {
				return i
			}
		}
	}
	for i := len(p) - 1; i >= 0; i-- {
		if w*p[i] > q[i] {
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

// residualBlocks32Go is the pure-Go block kernel: the block sums of
// (w·p - q)+ for the first len(sums) blocks into sums, and their total.
func residualBlocks32Go(w float32, p, q []float32, sums []float32) float64 {
	q = q[:len(p)]
	var mass float64
	for b := range sums {
		i := b * block32
		pp, qq := p[i:i+block32:i+block32], q[i:i+block32:i+block32]
		var s0, s1, s2, s3 float32
		for j := 0; j < block32; j += 4 {
			a0, a1, a2, a3 := w*pp[j], w*pp[j+1], w*pp[j+2], w*pp[j+3]
			s0 += a0 - min(a0, qq[j])
			s1 += a1 - min(a1, qq[j+1])
			s2 += a2 - min(a2, qq[j+2])
			s3 += a3 - min(a3, qq[j+3])
		}
		s := (s0 + s1) + (s2 + s3)
		sums[b] = s
		mass += float64(s)
	}
	return mass
}

// sampleResidualMass32 is SampleResidualMass for float32 rows: one pass
// computes the block sums and the mass, the block holding the target is
// found from the sums, and only that block is scanned again.
func sampleResidualMass32(u float64, w float32, p, q []float32) (int, float64) {
	nb := len(p) / block32
	if nb > maxBlocks32 {
		m := residualMass32(w, p, q)
		return sampleResidual32(u*m, w, p, q), m
	}
	var sums [maxBlocks32]float32
	mass := residualBlocks32(w, p, q, sums[:nb])
	tail := nb * block32
	for i := tail; i < len(p); i++ {
		if a := w * p[i]; a > q[i] {
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
