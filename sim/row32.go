package sim

// Kernels for float32 rows, the hot path of logged and synthetic large
// vocabularies. Go does not vectorise, so they are written for the scalar
// pipeline: float32 arithmetic inside blocks of block32 entries with four
// independent accumulators (no loop-carried dependency on one register),
// and float64 across blocks. Per block the float32 partial sums carry a
// relative rounding error below 16·2^-24 ≈ 1e-6, of the order of the rows'
// own float32 storage precision; float64 rows use the exact float64
// kernels in row.go. Sampling skips whole blocks whose mass does not reach
// the target and scans only the block that does, in float64.

const block32 = 64

// residualMass32 returns Σ (w·p - q)+ = w Σ p - Σ min(w·p, q).
func residualMass32(w float32, p, q []float32) float64 {
	q = q[:len(p)]
	var mass float64
	i := 0
	for ; i+block32 <= len(p); i += block32 {
		pp, qq := p[i:i+block32:i+block32], q[i:i+block32:i+block32]
		var s0, s1, s2, s3 float32
		for j := 0; j < block32; j += 4 {
			a0, a1, a2, a3 := w*pp[j], w*pp[j+1], w*pp[j+2], w*pp[j+3]
			s0 += a0 - min(a0, qq[j])
			s1 += a1 - min(a1, qq[j+1])
			s2 += a2 - min(a2, qq[j+2])
			s3 += a3 - min(a3, qq[j+3])
		}
		mass += float64((s0 + s1) + (s2 + s3))
	}
	for ; i < len(p); i++ {
		a := w * p[i]
		mass += float64(a - min(a, q[i]))
	}
	return mass
}

// sampleResidual32 returns the first x whose cumulative (w·p - q)+ exceeds
// target, the last positive entry if rounding leaves the target beyond the
// total, or -1 if there is none.
func sampleResidual32(target float64, w float32, p, q []float32) int {
	q = q[:len(p)]
	c := 0.0
	i := 0
	for ; i+block32 <= len(p); i += block32 {
		pp, qq := p[i:i+block32:i+block32], q[i:i+block32:i+block32]
		var s0, s1, s2, s3 float32
		for j := 0; j < block32; j += 4 {
			a0, a1, a2, a3 := w*pp[j], w*pp[j+1], w*pp[j+2], w*pp[j+3]
			s0 += a0 - min(a0, qq[j])
			s1 += a1 - min(a1, qq[j+1])
			s2 += a2 - min(a2, qq[j+2])
			s3 += a3 - min(a3, qq[j+3])
		}
		bs := float64((s0 + s1) + (s2 + s3))
		if c+bs <= target {
			c += bs
			continue
		}
		for j := range pp {
			if a := w * pp[j]; a > qq[j] {
				c += float64(a - qq[j])
				if c > target {
					return i + j
				}
			}
		}
	}
	for ; i < len(p); i++ {
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
