package lm

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/sim"
)

// Cached interpolates a model with a cache model over the context (see the
// package comment): with m the longest suffix length ≤ MaxMatch whose
// earlier occurrences in the last Window tokens of the context are
// followed by a token, the row is (1-Lambda)·M + Lambda·(empirical law of
// those followers). Without any earlier occurrence the row is M's.
type Cached struct {
	M        sim.Model
	Lambda   float64
	MaxMatch int
	// Window bounds the scanned context (0 means 1024 tokens: the cost of a
	// row grows with it).
	Window int
}

// Vocab returns the wrapped model's vocabulary size.
func (c Cached) Vocab() int { return c.M.Vocab() }

// Next writes the interpolated row into dst.
func (c Cached) Next(ctx []int, dst []float64) {
	win := c.Window
	if win <= 0 {
		win = 1024
	}
	lo := max(0, len(ctx)-win)
	// one pass: hits[m] counts earlier positions j whose preceding m
	// tokens match the context's last m (m ≤ MaxMatch)
	var hits [17]int
	mm := min(c.MaxMatch, len(ctx)-1, 16)
	for j := lo + 1; j < len(ctx); j++ {
		if l := matchLen(ctx, j, mm); l > 0 {
			hits[l]++
		}
	}
	m, n := 0, 0
	for l := mm; l >= 1 && c.Lambda > 0; l-- {
		n += hits[l] // positions matching at least l tokens
		if n > 0 {
			m = l
			break
		}
	}
	if m == 0 {
		c.M.Next(ctx, dst)
		return
	}
	if kn, ok := c.M.(*KN); ok {
		kn.nextScaled(ctx, dst, 1-c.Lambda)
	} else {
		c.M.Next(ctx, dst)
		for w := range dst {
			dst[w] *= 1 - c.Lambda
		}
	}
	inc := c.Lambda / float64(n)
	for j := lo + 1; j < len(ctx); j++ {
		if matchLen(ctx, j, mm) >= m {
			dst[ctx[j]] += inc
		}
	}
}

// matchLen returns the largest l ≤ mm with ctx[j-l:j] equal to the last l
// tokens of ctx (0 when the token before j differs from the last token).
func matchLen(ctx []int, j, mm int) int {
	L := len(ctx)
	l := 0
	for l < mm && j-1-l >= 0 && ctx[j-1-l] == ctx[L-1-l] {
		l++
	}
	return l
}

// Temp is a temperature variant of a model: rows norm(p^(1/T)).
type Temp struct {
	M sim.Model
	T float64
}

// Vocab returns the wrapped model's vocabulary size.
func (t Temp) Vocab() int { return t.M.Vocab() }

// Next writes norm(p^(1/T)) into dst.
func (t Temp) Next(ctx []int, dst []float64) {
	t.M.Next(ctx, dst)
	if t.T == 1 {
		return
	}
	// p^(1/T) relative to the largest entry, in log space: at T = 0.002
	// the plain power underflows every entry of a row to 0 (a row that
	// never emits), while here the largest entry stays 1, so any T > 0
	// gives a row (T → 0 tends to the argmax, ties shared).
	top := 0.0
	for _, v := range dst {
		top = max(top, v)
	}
	if !(top > 0) {
		return // no mass to rescale: the model's row as it is
	}
	lt := math.Log(top)
	for w, v := range dst {
		dst[w] = math.Exp((math.Log(v) - lt) / t.T)
	}
	sim.Normalize(dst)
}

func checkLambda(l float64) error {
	if !(l >= 0 && l < 1) {
		return fmt.Errorf("cache = %g; use a cache weight in [0, 1)", l)
	}
	return nil
}
