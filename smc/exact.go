package smc

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// MaxExactNodes bounds the number of strings Enumerate visits (about
// V^T); larger models have no exact oracle here.
const MaxExactNodes = 1 << 20

// String is a string with a probability or mass.
type String struct {
	Tokens []int
	P      float64
}

// Exact is the enumerated answer of a Model: the partition function, the
// posterior over finished strings and the filtering marginals.
type Exact struct {
	// Z = Σ_{s ∈ F} M(s)·Π_t G_t(s).
	Z float64
	// Post lists the finished strings with P(s) > 0, most probable first.
	Post []String
	// Zt[t-1] is Z_t = E_M[Π_{i ≤ t} G_i], the normaliser of the step-t
	// filtering posterior; Zt[T-1] = Z.
	Zt []float64
	// Filter[t-1] is the step-t filtering posterior P_t (Lew et al. §2)
	// over s_t: unfinished strings of t tokens and finished strings of at
	// most t tokens (absorbed), with P_t(s) > 0.
	Filter [][]String
	index  map[string]int
}

// Key encodes a token string as a map key (uvarints, prefix-free).
func Key(dst []byte, toks []int) []byte {
	dst = dst[:0]
	for _, x := range toks {
		dst = binary.AppendUvarint(dst, uint64(x))
	}
	return dst
}

// Index returns the position of the finished string with key k in Post,
// or -1 when P(s) = 0.
func (e *Exact) Index(k []byte) int {
	if i, ok := e.index[string(k)]; ok {
		return i
	}
	return -1
}

// Enumerate computes m's exact answers by visiting every string of at
// most T tokens with M-probability > 0 (depth first). Masses are products
// of float64 probabilities and potentials: exact up to rounding (relative
// error ≲ 2T ulps per string). It returns an error when the model is
// invalid, when more than MaxExactNodes strings would be visited, or when
// Z = 0 (no finished string satisfies the potentials).
func Enumerate(m *Model) (*Exact, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	v := m.Vocab()
	e := &Exact{Zt: make([]float64, m.T), Filter: make([][]String, m.T), index: map[string]int{}}
	var nodes int
	rows := make([][]float64, m.T)
	gs := make([][]float64, m.T)
	for t := range rows {
		rows[t], gs[t] = make([]float64, v), make([]float64, v)
	}
	scratch := make([]float64, v)
	var ctx []int
	gen := make([]int, 0, m.T)
	var visit func(mass float64) error
	visit = func(mass float64) error {
		d := len(gen) // children have d+1 tokens
		ctx = m.kernel(gen, ctx, rows[d], gs[d], scratch)
		for x := range v {
			pm := mass * rows[d][x]
			if rows[d][x] == 0 {
				continue
			}
			if nodes++; nodes > MaxExactNodes {
				return fmt.Errorf("%w: more than %d strings to enumerate (V = %d, T = %d); use a smaller vocabulary or horizon", ErrBadModel, MaxExactNodes, v, m.T)
			}
			gm := pm * gs[d][x]
			gen = append(gen, x)
			if x == m.EOS || len(gen) == m.T {
				if gm > 0 {
					s := String{Tokens: append([]int(nil), gen...), P: gm}
					e.Post = append(e.Post, s)
					for t := len(gen); t <= m.T; t++ {
						e.Filter[t-1] = append(e.Filter[t-1], s)
						e.Zt[t-1] += gm
					}
				}
			} else if gm > 0 {
				e.Filter[len(gen)-1] = append(e.Filter[len(gen)-1], String{Tokens: append([]int(nil), gen...), P: gm})
				e.Zt[len(gen)-1] += gm
				if err := visit(gm); err != nil {
					return err
				}
			}
			gen = gen[:len(gen)-1]
		}
		return nil
	}
	if err := visit(1); err != nil {
		return nil, err
	}
	e.Z = e.Zt[m.T-1]
	if !(e.Z > 0) {
		return nil, fmt.Errorf("%w: Z = 0: no finished string within T = %d tokens has positive potential; relax the potentials or raise T", ErrBadModel, m.T)
	}
	for t := range e.Filter {
		for i := range e.Filter[t] {
			e.Filter[t][i].P /= e.Zt[t]
		}
	}
	for i := range e.Post {
		e.Post[i].P /= e.Z
	}
	sort.SliceStable(e.Post, func(i, j int) bool { return e.Post[i].P > e.Post[j].P })
	var kb []byte
	for i, s := range e.Post {
		kb = Key(kb, s.Tokens)
		e.index[string(kb)] = i
	}
	return e, nil
}
