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
	// Window bounds the scanned context (0 means 4096 tokens).
	Window int
}

// Vocab returns the wrapped model's vocabulary size.
func (c Cached) Vocab() int { return c.M.Vocab() }

// Next writes the interpolated row into dst.
func (c Cached) Next(ctx []int, dst []float64) {
	c.M.Next(ctx, dst)
	if c.Lambda == 0 {
		return
	}
	win := c.Window
	if win <= 0 {
		win = 4096
	}
	lo := max(0, len(ctx)-win)
	for m := min(c.MaxMatch, len(ctx)-1); m >= 1; m-- {
		suf := ctx[len(ctx)-m:]
		hits := 0
		for j := lo + m; j < len(ctx); j++ {
			if matchAt(ctx, j, suf) {
				hits++
			}
		}
		if hits == 0 {
			continue
		}
		for w := range dst {
			dst[w] *= 1 - c.Lambda
		}
		inc := c.Lambda / float64(hits)
		for j := lo + m; j < len(ctx); j++ {
			if matchAt(ctx, j, suf) {
				dst[ctx[j]] += inc
			}
		}
		return
	}
}

// matchAt reports whether ctx[j-m:j] equals suf (m = len(suf)).
func matchAt(ctx []int, j int, suf []int) bool {
	m := len(suf)
	if ctx[j-1] != suf[m-1] {
		return false
	}
	for k := 0; k < m-1; k++ {
		if ctx[j-m+k] != suf[k] {
			return false
		}
	}
	return true
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
	e := 1 / t.T
	for w, v := range dst {
		dst[w] = math.Pow(v, e)
	}
	sim.Normalize(dst)
}

func checkLambda(l float64) error {
	if !(l >= 0 && l < 1) {
		return fmt.Errorf("cache = %g; use a cache weight in [0, 1)", l)
	}
	return nil
}
