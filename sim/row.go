package sim

import "math"

// Row is one distribution over the vocabulary, stored either as float64 or
// as float32 (logged logits and large synthetic pools are float32 to halve
// memory traffic). A Row is a small value; copying it does not copy the
// data. Arithmetic on rows is always done in float64.
//
// The kernels below (At, Sum, ResidualMass, SampleResidual, SampleRow,
// ArgmaxRow) dispatch once per call on the storage type and then run a
// tight loop, so verifiers are written once and stay fast on both kinds.
type Row struct {
	f64 []float64
	f32 []float32
}

// F64 wraps a float64 slice as a Row without copying.
func F64(p []float64) Row { return Row{f64: p} }

// F32 wraps a float32 slice as a Row without copying.
func F32(p []float32) Row { return Row{f32: p} }

// Len returns the vocabulary size of r.
func (r Row) Len() int {
	if r.f32 != nil {
		return len(r.f32)
	}
	return len(r.f64)
}

// At returns r(i) as float64.
func (r Row) At(i int) float64 {
	if r.f32 != nil {
		return float64(r.f32[i])
	}
	return r.f64[i]
}

// Float64s copies r into dst (grown as needed) and returns it.
func (r Row) Float64s(dst []float64) []float64 {
	if r.f32 != nil {
		return Float64s(dst, r.f32)
	}
	dst = grow(dst, len(r.f64))
	copy(dst, r.f64)
	return dst
}

// Data returns r's storage, the float32 or the float64 slice (the other
// nil), for loops that should not dispatch on the type at every entry.
// The slices are r's own: a caller must not write them.
func (r Row) Data() ([]float32, []float64) { return r.f32, r.f64 }

// IsZero reports whether r holds no data.
func (r Row) IsZero() bool { return r.f32 == nil && r.f64 == nil }

type float interface{ ~float32 | ~float64 }

func sameKind(p, q Row) {
	if (p.f32 != nil) != (q.f32 != nil) {
		panic("sim: rows of different storage types")
	}
	if p.Len() != q.Len() {
		panic("sim: rows of different lengths")
	}
}

// Sum returns Σ r(x).
func (r Row) Sum() float64 {
	if r.f32 != nil {
		return sumOf(r.f32)
	}
	return sumOf(r.f64)
}

func sumOf[F float](p []F) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(p); i += 4 {
		s0 += float64(p[i])
		s1 += float64(p[i+1])
		s2 += float64(p[i+2])
		s3 += float64(p[i+3])
	}
	for ; i < len(p); i++ {
		s0 += float64(p[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// ResidualMass returns Σ_x (w·p(x) - q(x))+ for rows of equal length and
// storage type (it panics otherwise). w = 1 gives the normaliser 1 - β of
// token verification's residual; w < 1 the block-verification masses Z_i.
//
// It uses (d)+ = (|d| + d)/2, so the loop has no data-dependent branch:
//
//	Σ (w p - q)+ = ½ (Σ |w p - q| + w Σ p - Σ q).
func ResidualMass(w float64, p, q Row) float64 {
	sameKind(p, q)
	if p.f32 != nil {
		return residualMass32(float32(w), p.f32, q.f32)
	}
	a, sp, sq := residualSums(w, p.f64, q.f64)
	return math.Max(0, (a+w*sp-sq)/2)
}

// ResidualMassDirect is ResidualMass summed entry by entry, Σ max(0, w·p -
// q), without the identity's cancellation: the identity's absolute error
// is about ε·(wΣp + Σq), which swamps a residual near zero (peaked rows
// with p ≈ q on the top token), while this sum has no cancellation across
// entries. It is slower (a branch per entry) and rounds differently, so
// ResidualMass keeps the identity and the exact engine uses this one only
// where the identity's law does not sum to 1 (Law.precise).
func ResidualMassDirect(w float64, p, q Row) float64 {
	sameKind(p, q)
	z := 0.0
	for i := range p.Len() {
		if d := w*p.At(i) - q.At(i); d > 0 {
			z += d
		}
	}
	return z
}

func residualSums[F float](w float64, p, q []F) (abs, sp, sq float64) {
	q = q[:len(p)]
	var a0, a1, p0, p1, q0, q1 float64
	i := 0
	for ; i+2 <= len(p); i += 2 {
		x0, y0 := float64(p[i]), float64(q[i])
		x1, y1 := float64(p[i+1]), float64(q[i+1])
		a0 += math.Abs(w*x0 - y0)
		a1 += math.Abs(w*x1 - y1)
		p0 += x0
		p1 += x1
		q0 += y0
		q1 += y1
	}
	for ; i < len(p); i++ {
		x0, y0 := float64(p[i]), float64(q[i])
		a0 += math.Abs(w*x0 - y0)
		p0 += x0
		q0 += y0
	}
	return a0 + a1, p0 + p1, q0 + q1
}

// SampleResidual returns the inverse-CDF sample of norm((w·p - q)+) at
// u ∈ [0, 1): the first x whose cumulative residual exceeds u·mass, where
// mass = ResidualMass(w, p, q). If rounding leaves u·mass beyond the
// cumulative total, it returns the last x with positive residual. It returns
// -1 if the residual is zero everywhere. It panics on rows of different
// length or storage type.
func SampleResidual(u, w float64, p, q Row, mass float64) int {
	sameKind(p, q)
	if p.f32 != nil {
		return sampleResidual32(u*mass, float32(w), p.f32, q.f32)
	}
	return sampleResidual(u*mass, w, p.f64, q.f64)
}

func sampleResidual[F float](target, w float64, p, q []F) int {
	q = q[:len(p)]
	// Branch-free accumulation of 2·(d)+ = |d| + d: the sign of p - q is
	// random, so a branch on it would mispredict half the time. The exit
	// test is predictable (false until the end). The first x whose
	// cumulative exceeds the target necessarily has d > 0.
	t2 := 2 * target
	c := 0.0
	for i := range p {
		d := w*float64(p[i]) - float64(q[i])
		c += math.Abs(d) + d
		if c > t2 {
			return i
		}
	}
	for i := len(p) - 1; i >= 0; i-- { // rounding: the last positive entry
		if w*float64(p[i])-float64(q[i]) > 0 {
			return i
		}
	}
	return -1
}

// SampleResidualMass is SampleResidual at u together with the mass
// ResidualMass(w, p, q), computed in a single pass over the rows where the
// storage allows it (float32 rows keep their block sums). It returns
// (-1, 0) if the residual is zero everywhere.
func SampleResidualMass(u, w float64, p, q Row) (int, float64) {
	sameKind(p, q)
	if p.f32 != nil {
		return sampleResidualMass32(u, float32(w), p.f32, q.f32)
	}
	m := ResidualMass(w, p, q)
	return SampleResidual(u, w, p, q, m), m
}

// SampleRow returns the inverse-CDF sample of r at u ∈ [0, 1): the first x
// with Σ_{y≤x} r(y) > u·Σ r. If rounding leaves the target beyond the
// cumulative total it returns the last x with r(x) > 0.
func SampleRow(u float64, r Row) int {
	if r.f32 != nil {
		return sampleRow32(u, r.f32)
	}
	return sampleRow(u, r.f64)
}

func sampleRow[F float](u float64, p []F) int {
	// Rows are normalised; entries are >= 0, so the cumulative sum only
	// grows and the first x past u has p(x) > 0.
	c := 0.0
	for i, v := range p {
		c += float64(v)
		if c > u {
			return i
		}
	}
	for i := len(p) - 1; i >= 0; i-- { // rounding: the last positive entry
		if p[i] > 0 {
			return i
		}
	}
	return -1
}

// ArgmaxRow returns the index of the largest entry of r, the lowest on ties.
func ArgmaxRow(r Row) int {
	if r.f32 != nil {
		return argmaxOf(r.f32)
	}
	return argmaxOf(r.f64)
}

func argmaxOf[F float](p []F) int {
	best := 0
	for i, v := range p {
		if v > p[best] {
			best = i
		}
	}
	return best
}
