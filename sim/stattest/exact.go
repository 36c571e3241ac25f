package stattest

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/specsim/specsim/internal/binenc"
)

// ExactSum is the exact sum of float64s: a fixed-point integer in units
// of 2^-1074 (the smallest subnormal), so adding is exact and the sum
// does not depend on the order or grouping of its terms. Its Float64 is
// the correctly rounded sum. A sharded check sums its chunks' moments
// with it, so N shards merged give the one-process run's numbers bit for
// bit. Non-finite terms are summed apart, as float64s. The zero value is
// the empty sum; an ExactSum must not be copied once used.
type ExactSum struct {
	v       big.Int
	tmp     big.Int
	special float64 // the sum of the non-finite terms
}

// Add adds x exactly.
func (s *ExactSum) Add(x float64) {
	if x == 0 {
		return
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		s.special += x
		return
	}
	bits := math.Float64bits(x)
	e := uint((bits >> 52) & 0x7ff)
	m := bits & (1<<52 - 1)
	shift := uint(0)
	if e > 0 { // normal: (2^52 + m)·2^(e-1075) = (2^52 + m)·2^(e-1)·2^-1074
		m |= 1 << 52
		shift = e - 1
	}
	s.tmp.SetUint64(m)
	s.tmp.Lsh(&s.tmp, shift)
	if bits>>63 != 0 {
		s.v.Sub(&s.v, &s.tmp)
	} else {
		s.v.Add(&s.v, &s.tmp)
	}
}

// AddSum adds o's terms.
func (s *ExactSum) AddSum(o *ExactSum) {
	s.v.Add(&s.v, &o.v)
	s.special += o.special
}

// Float64 returns the sum rounded to the nearest float64 (ties to even).
func (s *ExactSum) Float64() float64 {
	if s.special != 0 || math.IsNaN(s.special) {
		return s.special
	}
	f := new(big.Float).SetInt(&s.v)
	f.SetMantExp(f, -1074)
	x, _ := f.Float64()
	return x
}

// AppendBinary appends the sum's exact value (see ReadExactSum).
func (s *ExactSum) AppendBinary(b []byte) []byte {
	b = binenc.AppendFloat(b, s.special)
	b = binenc.AppendVarint(b, int64(s.v.Sign()+1))
	return binenc.AppendBytes(b, s.v.Bytes())
}

// maxExactBytes bounds an ExactSum's magnitude in bytes: 2^2098 covers
// every finite float64 in units of 2^-1074, with room for 2^62 terms.
const maxExactBytes = 2160 / 8

// ReadExactSum reads a sum written by AppendBinary into s.
func ReadExactSum(r *binenc.Reader, s *ExactSum) {
	s.special = r.Float()
	sign := int(r.Int("exact sum sign", 0, 2)) - 1
	mag := r.Bytes()
	if r.Err() != nil {
		return
	}
	if len(mag) > maxExactBytes || (sign == 0) != (len(mag) == 0) || (len(mag) > 0 && mag[0] == 0) {
		r.Fail(errors.New("an exact sum's magnitude is malformed (a damaged file)"))
		return
	}
	s.v.SetBytes(mag)
	if sign < 0 {
		s.v.Neg(&s.v)
	}
}

// HeteroSum is the exact sum of Hetero accumulators filled by AddBlocks
// alone: their counts and their block moments Σ mass_b and
// Σ mass_a·mass_b, as ExactSums. Its Hetero, and so its test, is the same
// whatever the order in which the accumulators were added.
type HeteroSum struct {
	k                     int
	n, impossible, random int64
	obs                   []int64
	bw                    []int
	bm, bmm               []ExactSum
}

// NewHeteroSum returns an empty sum over k cells.
func NewHeteroSum(k int) *HeteroSum { return &HeteroSum{k: k, obs: make([]int64, k)} }

// blocks fixes the sum's block layout to bw, or refuses another one.
func (s *HeteroSum) blocks(bw []int) error {
	if bw == nil {
		return nil
	}
	if s.bw == nil {
		s.bw = slices.Clone(bw)
		s.bm = make([]ExactSum, len(bw))
		s.bmm = make([]ExactSum, len(bw)*len(bw))
		return nil
	}
	if !slices.Equal(s.bw, bw) {
		return fmt.Errorf("stattest: HeteroSum of block layouts %v and %v", s.bw, bw)
	}
	return nil
}

// AddHetero adds h, which must have k cells and hold only AddBlocks'
// moments (no Add, not flushed by a Test or a Merge).
func (s *HeteroSum) AddHetero(h *Hetero) error {
	if h.k != s.k {
		return fmt.Errorf("stattest: HeteroSum of %d cells given a Hetero of %d", s.k, h.k)
	}
	if slices.ContainsFunc(h.exp, func(x float64) bool { return x != 0 }) {
		return errors.New("stattest: HeteroSum takes accumulators filled by AddBlocks alone")
	}
	if err := s.blocks(h.bw); err != nil {
		return err
	}
	s.n, s.impossible, s.random = s.n+h.n, s.impossible+h.impossible, s.random+h.random
	for i, v := range h.obs {
		s.obs[i] += v
	}
	for i, v := range h.bm {
		s.bm[i].Add(v)
	}
	for i, v := range h.bmm {
		s.bmm[i].Add(v)
	}
	return nil
}

// AddSum adds o (same cells and block layout).
func (s *HeteroSum) AddSum(o *HeteroSum) error {
	if o.k != s.k {
		return fmt.Errorf("stattest: HeteroSum of %d cells given one of %d", s.k, o.k)
	}
	if err := s.blocks(o.bw); err != nil {
		return err
	}
	s.n, s.impossible, s.random = s.n+o.n, s.impossible+o.impossible, s.random+o.random
	for i, v := range o.obs {
		s.obs[i] += v
	}
	for i := range o.bm {
		s.bm[i].AddSum(&o.bm[i])
	}
	for i := range o.bmm {
		s.bmm[i].AddSum(&o.bmm[i])
	}
	return nil
}

// N returns the number of observations.
func (s *HeteroSum) N() int64 { return s.n }

// K returns the number of cells.
func (s *HeteroSum) K() int { return s.k }

// Hetero returns an accumulator holding the sum, each moment rounded
// once, for Test and TopResiduals.
func (s *HeteroSum) Hetero() *Hetero {
	h := NewHetero(s.k)
	h.n, h.impossible, h.random = s.n, s.impossible, s.random
	copy(h.obs, s.obs)
	if s.bw != nil {
		h.setBlocks(s.bw)
		for i := range s.bm {
			h.bm[i] = s.bm[i].Float64()
		}
		for i := range s.bmm {
			h.bmm[i] = s.bmm[i].Float64()
		}
	}
	return h
}

// AppendBinary appends the sum (see ReadHeteroSum).
func (s *HeteroSum) AppendBinary(b []byte) []byte {
	b = binenc.AppendUvarint(b, uint64(s.k))
	b = binenc.AppendVarint(b, s.n)
	b = binenc.AppendVarint(b, s.impossible)
	b = binenc.AppendVarint(b, s.random)
	b = binenc.AppendInts(b, s.obs)
	b = binenc.AppendUvarint(b, uint64(len(s.bw)))
	for _, w := range s.bw {
		b = binenc.AppendVarint(b, int64(w))
	}
	for i := range s.bm {
		b = s.bm[i].AppendBinary(b)
	}
	for i := range s.bmm {
		b = s.bmm[i].AppendBinary(b)
	}
	return b
}

// ReadHeteroSum reads a sum written by AppendBinary; it must have k
// cells.
func ReadHeteroSum(r *binenc.Reader, k int) *HeteroSum {
	if int(r.Uvarint()) != k && r.Err() == nil {
		r.Fail(fmt.Errorf("a law-test accumulator of another cell count than %d (a damaged file or another configuration)", k))
	}
	s := &HeteroSum{k: k}
	s.n, s.impossible, s.random = r.Varint(), r.Varint(), r.Varint()
	s.obs = r.Ints()
	nb := r.Count(1)
	if r.Err() != nil {
		return nil
	}
	if len(s.obs) != k || s.n < 0 || s.impossible < 0 || s.random < 0 || nb > k {
		r.Fail(errors.New("a law-test accumulator is malformed (a damaged file)"))
		return nil
	}
	if nb > 0 {
		bw, tot := make([]int, nb), 0
		for i := range bw {
			bw[i] = int(r.Int("block width", 1, int64(k)))
			tot += bw[i]
		}
		if r.Err() == nil && tot != k {
			r.Fail(errors.New("a law-test accumulator's blocks do not cover its cells (a damaged file)"))
		}
		if r.Err() != nil {
			return nil
		}
		_ = s.blocks(bw)
		for i := range s.bm {
			ReadExactSum(r, &s.bm[i])
		}
		for i := range s.bmm {
			ReadExactSum(r, &s.bmm[i])
		}
	}
	if r.Err() != nil {
		return nil
	}
	return s
}

// Blocks returns the block widths of the sums (nil before any block).
func (s *HeteroSum) Blocks() []int { return s.bw }
