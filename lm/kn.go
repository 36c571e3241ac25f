package lm

import (
	"fmt"
	"math"
	"slices"
)

// MaxOrder is the highest n-gram order a KN model may have.
const MaxOrder = 6

// KN is an interpolated Kneser–Ney n-gram model (see the package comment
// for the formula). Its rows are computed as
//
//	p(w|ctx) = G·Uni(w) + Σ_{n≥2, h_n seen} W_n·Disc_n(w|h_n),
//
// where Uni is the dense order-1 row, Disc_n the sparse discounted
// relative counts of the context h_n of order n, W_n the product of the
// backoff weights of the orders above n, and G the product of all of them:
// one dense pass over V and a few sparse additions per row. All fields are
// exported for the on-disk cache; build a KN with TrainKN.
type KN struct {
	V, Order int
	// D[n] is the discount of order n (D[0] unused).
	D []float64
	// Uni is the dense row of order 1 (interpolated with the uniform law).
	Uni []float64
	// Levels[n-2] holds the contexts of order n = 2..Order.
	Levels []Level
}

// Level holds the contexts of one order: an open-addressing hash table from
// the context's hash to its index, and per context its backoff weight
// D·N1+(h •)/c(h) and its followers with their discounted probabilities
// max(c(h w) - D, 0)/c(h) in Tok[Start[i]:Start[i+1]], Disc[...].
type Level struct {
	Keys   []uint64
	Vals   []int32
	Weight []float64
	Start  []int32
	Tok    []int32
	Disc   []float64
}

func (l *Level) find(k uint64) int32 {
	if len(l.Keys) == 0 {
		return -1
	}
	mask := uint64(len(l.Keys) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch l.Keys[i] {
		case k:
			return l.Vals[i]
		case 0:
			return -1
		}
	}
}

func (l *Level) insert(k uint64, v int32) {
	mask := uint64(len(l.Keys) - 1)
	i := k & mask
	for l.Keys[i] != 0 {
		i = (i + 1) & mask
	}
	l.Keys[i], l.Vals[i] = k, v
}

// hashStep extends a context hash by one older token; hashes are never 0
// (0 marks an empty slot).
func hashStep(h uint64, tok int) uint64 {
	z := h ^ (uint64(tok)+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return z
}

const hashSeed = 0x6a09e667f3bcc909

// gram is one occurrence: the hash of a context of order n, the next token
// and the token before the context (-1 at the start of a document).
type gram struct {
	h         uint64
	w, before int32
}

// TrainKN trains a model of the given order over v tokens on the token
// streams docs (one per document; n-grams never cross documents).
func TrainKN(docs [][]int, v, order int) (*KN, error) { return TrainSkipKN(docs, v, order, 0) }

// TrainSkipKN trains a model that predicts the token skip+1 positions
// after its context: p(x_{t+1+skip} | x_{t-order+2..t}), with the same
// smoothing as TrainKN. Next(ctx) then gives the law of the token skip
// positions after the one following ctx, from ctx alone: a Medusa-style
// head (Cai et al. 2024, arXiv 2401.10774) in n-gram form.
func TrainSkipKN(docs [][]int, v, order, skip int) (*KN, error) {
	if skip < 0 {
		return nil, fmt.Errorf("kn: skip = %d; use skip >= 0", skip)
	}
	if order < 1 || order > MaxOrder {
		return nil, fmt.Errorf("kn: order = %d; use 1 <= order <= %d", order, MaxOrder)
	}
	if v < 2 {
		return nil, fmt.Errorf("kn: V = %d; use at least 2 tokens", v)
	}
	m := &KN{V: v, Order: order, D: make([]float64, order+1)}
	var grams []gram
	for n := order; n >= 1; n-- {
		var err error
		if grams, err = skipGrams(grams[:0], docs, v, n, skip); err != nil {
			return nil, err
		}
		cells := knCells(grams, n == order)
		d := knDiscount(cells)
		m.D[n] = d
		if n == 1 {
			m.Uni = knUnigram(cells, d, v)
			continue
		}
		m.Levels = append([]Level{newKNLevel(cells, d)}, m.Levels...)
	}
	return m, nil
}

// skipGrams appends to grams the n-grams of docs whose last token stands
// skip positions after the one following its n-1 context tokens, each with
// its context hash and the token before its context (-1 at a document
// start), sorted by (hash, token, before); a token outside [0, v) is an
// error.
func skipGrams(grams []gram, docs [][]int, v, n, skip int) ([]gram, error) {
	for _, d := range docs {
		for t := n - 1 + skip; t < len(d); t++ {
			h := uint64(hashSeed)
			for j := 1; j < n; j++ {
				h = hashStep(h, d[t-skip-j])
			}
			b := int32(-1)
			if t-skip-n >= 0 {
				b = int32(d[t-skip-n])
			}
			if d[t] < 0 || d[t] >= v {
				return nil, fmt.Errorf("kn: token %d outside the vocabulary [0, %d)", d[t], v)
			}
			grams = append(grams, gram{h, int32(d[t]), b})
		}
	}
	slices.SortFunc(grams, func(a, b gram) int {
		switch {
		case a.h != b.h:
			return cmpU(a.h, b.h)
		case a.w != b.w:
			return int(a.w - b.w)
		}
		return int(a.before - b.before)
	})
	return grams, nil
}

// knCell is the count c of token w after the context of hash h.
type knCell struct {
	h uint64
	w int32
	c float64
}

// knCells counts the sorted grams per (context, token): raw counts at the
// top order (raw), continuation counts below (distinct preceding tokens;
// a document start counts as one).
func knCells(grams []gram, raw bool) []knCell {
	var cells []knCell
	for i := 0; i < len(grams); {
		j := i
		c := 0.0
		for j < len(grams) && grams[j].h == grams[i].h && grams[j].w == grams[i].w {
			if raw || j == i || grams[j].before != grams[j-1].before {
				c++
			}
			j++
		}
		cells = append(cells, knCell{grams[i].h, grams[i].w, c})
		i = j
	}
	return cells
}

// knDiscount is the level's absolute discount n1/(n1 + 2·n2) from the
// counts of count one and two (0.75 when either is absent).
func knDiscount(cells []knCell) float64 {
	n1, n2 := 0.0, 0.0
	for _, c := range cells {
		switch c.c {
		case 1:
			n1++
		case 2:
			n2++
		}
	}
	if n1 > 0 && n2 > 0 {
		return n1 / (n1 + 2*n2)
	}
	return 0.75
}

// knUnigram is the unigram law: each count discounted by d, the mass
// discounted spread uniformly over the v tokens.
func knUnigram(cells []knCell, d float64, v int) []float64 {
	total := 0.0
	for _, c := range cells {
		total += c.c
	}
	uni := make([]float64, v)
	back := d * float64(len(cells)) / total
	for w := range uni {
		uni[w] = back / float64(v)
	}
	for _, c := range cells {
		uni[c.w] += (c.c - d) / total
	}
	return uni
}

// newKNLevel builds a level above the unigram from its cells (sorted by
// context): per context its back-off weight and its tokens' discounted
// probabilities, found through an open-addressing table at most half
// full.
func newKNLevel(cells []knCell, d float64) Level {
	var l Level
	size := 2
	for size < 2*len(cells)/2+2 {
		size *= 2
	}
	nctx := 0
	for i := range cells {
		if i == 0 || cells[i].h != cells[i-1].h {
			nctx++
		}
	}
	for size < 2*nctx {
		size *= 2
	}
	l.Keys, l.Vals = make([]uint64, size), make([]int32, size)
	l.Start = make([]int32, 0, nctx+1)
	for i := 0; i < len(cells); {
		j := i
		total := 0.0
		for j < len(cells) && cells[j].h == cells[i].h {
			total += cells[j].c
			j++
		}
		l.insert(cells[i].h, int32(len(l.Weight)))
		l.Weight = append(l.Weight, d*float64(j-i)/total)
		l.Start = append(l.Start, int32(len(l.Tok)))
		for k := i; k < j; k++ {
			l.Tok = append(l.Tok, cells[k].w)
			l.Disc = append(l.Disc, (cells[k].c-d)/total)
		}
		i = j
	}
	l.Start = append(l.Start, int32(len(l.Tok)))
	return l
}

// check reports whether m is a model TrainSkipKN could have built over v
// tokens at order: every size and index consistent (a lookup can neither
// index out of range nor search a hash table with no empty slot for
// ever) and every probability finite and non-negative. A model read back
// from a file is checked before use.
func (m *KN) check(v, order int) error {
	finite := func(xs []float64, what string) error {
		for _, x := range xs {
			if !(x >= 0) || math.IsInf(x, 0) {
				return fmt.Errorf("%s holds %g", what, x)
			}
		}
		return nil
	}
	switch {
	case m.V != v || m.Order != order:
		return fmt.Errorf("V = %d, order %d; want %d, %d", m.V, m.Order, v, order)
	case len(m.D) != order+1 || len(m.Uni) != v || len(m.Levels) != order-1:
		return fmt.Errorf("%d discounts, %d unigrams, %d levels", len(m.D), len(m.Uni), len(m.Levels))
	}
	if err := finite(m.D, "a discount"); err != nil {
		return err
	}
	if err := finite(m.Uni, "the unigram row"); err != nil {
		return err
	}
	for li, l := range m.Levels {
		n := len(l.Keys)
		if n < 2 || n&(n-1) != 0 || len(l.Vals) != n {
			return fmt.Errorf("level %d: a hash table of %d keys and %d values", li+2, n, len(l.Vals))
		}
		nctx, empty := 0, false
		for i, k := range l.Keys {
			if k == 0 {
				empty = true
				continue
			}
			nctx++
			if l.Vals[i] < 0 || int(l.Vals[i]) >= len(l.Weight) {
				return fmt.Errorf("level %d: context index %d of %d", li+2, l.Vals[i], len(l.Weight))
			}
		}
		if !empty || nctx != len(l.Weight) || len(l.Start) != nctx+1 || len(l.Tok) != len(l.Disc) {
			return fmt.Errorf("level %d: %d contexts, %d weights, %d starts, %d tokens, %d probabilities", li+2, nctx, len(l.Weight), len(l.Start), len(l.Tok), len(l.Disc))
		}
		if l.Start[0] != 0 || int(l.Start[nctx]) != len(l.Tok) {
			return fmt.Errorf("level %d: followers span [%d, %d) of %d", li+2, l.Start[0], l.Start[nctx], len(l.Tok))
		}
		for i := range nctx {
			if l.Start[i] > l.Start[i+1] {
				return fmt.Errorf("level %d: context %d's followers end before they start", li+2, i)
			}
		}
		for _, t := range l.Tok {
			if t < 0 || int(t) >= v {
				return fmt.Errorf("level %d: token %d outside [0, %d)", li+2, t, v)
			}
		}
		if err := finite(l.Weight, fmt.Sprintf("level %d: a weight", li+2)); err != nil {
			return err
		}
		if err := finite(l.Disc, fmt.Sprintf("level %d: a probability", li+2)); err != nil {
			return err
		}
	}
	return nil
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// Vocab returns V.
func (m *KN) Vocab() int { return m.V }

// Next writes p(.|ctx) into dst (length V). It allocates nothing and is
// safe for concurrent use.
func (m *KN) Next(ctx []int, dst []float64) { m.nextScaled(ctx, dst, 1) }

// nextScaled writes scale·p(.|ctx) into dst.
func (m *KN) nextScaled(ctx []int, dst []float64, scale float64) {
	var idx [MaxOrder + 1]int32
	var wt [MaxOrder + 1]float64
	h := uint64(hashSeed)
	top := 1
	for n := 2; n <= m.Order && n-1 <= len(ctx); n++ {
		h = hashStep(h, ctx[len(ctx)-(n-1)])
		idx[n] = m.Levels[n-2].find(h)
		top = n
	}
	g := scale
	for n := top; n >= 2; n-- {
		wt[n] = g
		if i := idx[n]; i >= 0 {
			g *= m.Levels[n-2].Weight[i]
		}
	}
	uni := m.Uni[:len(dst)]
	for w, u := range uni {
		dst[w] = g * u
	}
	for n := 2; n <= top; n++ {
		i := idx[n]
		if i < 0 {
			continue
		}
		l := &m.Levels[n-2]
		s, e := l.Start[i], l.Start[i+1]
		toks, disc := l.Tok[s:e], l.Disc[s:e]
		for k, w := range toks {
			dst[w] += wt[n] * disc[k]
		}
	}
}
