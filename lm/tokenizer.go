package lm

import (
	"container/heap"
	"fmt"
	"sort"
)

// Tokenizer maps bytes to token ids: ids 0..255 are the bytes, and id
// 256+i is the i-th merge of a byte-pair encoding. A tokenizer with no
// merges is byte-level (V = 256).
type Tokenizer struct {
	// Merges[i] is the pair of ids merged into id 256+i.
	Merges [][2]int32
	rank   map[uint64]int32
	pieces [][]byte
}

// ByteTokenizer returns the byte-level tokenizer (V = 256).
func ByteTokenizer() *Tokenizer { return newTokenizer(nil) }

func newTokenizer(merges [][2]int32) *Tokenizer {
	t := &Tokenizer{Merges: merges, rank: make(map[uint64]int32, len(merges))}
	t.pieces = make([][]byte, 256+len(merges))
	for b := range 256 {
		t.pieces[b] = []byte{byte(b)}
	}
	for i, m := range merges {
		t.rank[pairKey(m[0], m[1])] = int32(i)
		t.pieces[256+i] = append(append([]byte(nil), t.pieces[m[0]]...), t.pieces[m[1]]...)
	}
	return t
}

// V returns the vocabulary size.
func (t *Tokenizer) V() int { return 256 + len(t.Merges) }

// Piece returns the bytes of token id.
func (t *Tokenizer) Piece(id int) []byte { return t.pieces[id] }

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// chunks splits text into pre-tokenisation chunks: runs of letters (with
// one leading space), runs of digits, runs of other printable bytes, and
// runs of whitespace. Merges never cross a chunk boundary.
func chunks(text []byte, fn func([]byte)) {
	class := func(b byte) int {
		switch {
		case b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_' || b >= 0x80:
			return 1
		case b >= '0' && b <= '9':
			return 2
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			return 3
		}
		return 4
	}
	i := 0
	for i < len(text) {
		j := i
		c := class(text[j])
		if text[j] == ' ' && j+1 < len(text) && class(text[j+1]) != 3 {
			j++
			c = class(text[j])
		}
		j++
		for j < len(text) && class(text[j]) == c {
			if c == 3 && text[j] == ' ' && j+1 < len(text) && class(text[j+1]) != 3 {
				break
			}
			j++
		}
		fn(text[i:j])
		i = j
	}
}

// TrainBPE learns a byte-pair encoding with vocabulary v (256 ≤ v ≤
// 65536) on the texts. Ties between equally frequent pairs go to the
// smallest pair of ids, so training is deterministic. Training stops early
// when no pair occurs twice.
func TrainBPE(texts [][]byte, v int) (*Tokenizer, error) {
	if v < 256 || v > 1<<16 {
		return nil, fmt.Errorf("bpe: V = %d; use 256 <= V <= 65536 (256 is byte-level)", v)
	}
	s := newBPEState(texts)
	var merges [][2]int32
	for len(merges) < v-256 && s.h.Len() > 0 {
		top := heap.Pop(s.h).(pairCount)
		if s.pc[top.pair] != top.count {
			continue // stale entry
		}
		if top.count < 2 {
			break
		}
		a, b := int32(top.pair>>32), int32(uint32(top.pair))
		id := int32(256 + len(merges))
		merges = append(merges, [2]int32{a, b})
		s.merge(top.pair, a, b, id)
	}
	return newTokenizer(merges), nil
}

// bpeState is TrainBPE's working state: the distinct chunks (words) as
// ids with their frequencies, the count of each adjacent pair (pc), the
// words each pair was seen in (where), a max-heap of pair counts (stale
// entries are skipped when popped) and the pairs a merge touched.
type bpeState struct {
	words   [][]int32
	freq    []int64
	pc      map[uint64]int64
	where   map[uint64][]int32
	h       *pairHeap
	touched map[uint64]bool
}

// newBPEState counts the texts' chunks, in sorted order, as byte words
// and their adjacent pairs, and heaps the pair counts.
func newBPEState(texts [][]byte) *bpeState {
	counts := map[string]int64{}
	for _, tx := range texts {
		chunks(tx, func(c []byte) { counts[string(c)]++ })
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := &bpeState{words: make([][]int32, len(keys)), freq: make([]int64, len(keys)),
		pc: map[uint64]int64{}, where: map[uint64][]int32{}, h: &pairHeap{}, touched: map[uint64]bool{}}
	for i, k := range keys {
		w := make([]int32, len(k))
		for j := range len(k) {
			w[j] = int32(k[j])
		}
		s.words[i], s.freq[i] = w, counts[k]
		for j := 0; j+1 < len(w); j++ {
			p := pairKey(w[j], w[j+1])
			s.pc[p] += s.freq[i]
			s.where[p] = append(s.where[p], int32(i))
		}
	}
	for p, c := range s.pc {
		*s.h = append(*s.h, pairCount{p, c})
	}
	heap.Init(s.h)
	return s
}

// merge replaces the pair (a, b) by id in every word it was seen in,
// then re-heaps the counts of the pairs that changed (dropping those that
// fell to zero).
func (s *bpeState) merge(pair uint64, a, b, id int32) {
	clear(s.touched)
	seen := -1
	for _, wi := range s.where[pair] {
		if int(wi) == seen {
			continue
		}
		seen = int(wi)
		s.rewrite(wi, a, b, id)
	}
	delete(s.where, pair)
	for p := range s.touched {
		if s.pc[p] > 0 {
			heap.Push(s.h, pairCount{p, s.pc[p]})
		} else {
			delete(s.pc, p)
		}
	}
}

// rewrite merges (a, b) into id in word wi, if it still holds the pair:
// its old pairs' counts are taken off, its new pairs' put on, and the
// pairs with id recorded in where.
func (s *bpeState) rewrite(wi int32, a, b, id int32) {
	w, f := s.words[wi], s.freq[wi]
	has := false
	for j := 0; j+1 < len(w); j++ {
		if w[j] == a && w[j+1] == b {
			has = true
			break
		}
	}
	if !has {
		return
	}
	for j := 0; j+1 < len(w); j++ {
		p := pairKey(w[j], w[j+1])
		s.pc[p] -= f
		s.touched[p] = true
	}
	out := w[:0]
	for j := 0; j < len(w); j++ {
		if j+1 < len(w) && w[j] == a && w[j+1] == b {
			out = append(out, id)
			j++
		} else {
			out = append(out, w[j])
		}
	}
	s.words[wi] = out
	for j := 0; j+1 < len(out); j++ {
		p := pairKey(out[j], out[j+1])
		s.pc[p] += f
		s.touched[p] = true
		if out[j] == id || out[j+1] == id {
			s.where[p] = append(s.where[p], wi)
		}
	}
}

type pairCount struct {
	pair  uint64
	count int64
}

type pairHeap []pairCount

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	if h[i].count != h[j].count {
		return h[i].count > h[j].count
	}
	return h[i].pair < h[j].pair
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pairCount)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Encode appends the token ids of text to dst and returns it.
func (t *Tokenizer) Encode(dst []int, text []byte) []int {
	memo := map[string][]int{}
	var sym []int32
	chunks(text, func(c []byte) {
		if ids, ok := memo[string(c)]; ok {
			dst = append(dst, ids...)
			return
		}
		sym = sym[:0]
		for _, b := range c {
			sym = append(sym, int32(b))
		}
		for len(sym) > 1 {
			best, at := int32(-1), -1
			for j := 0; j+1 < len(sym); j++ {
				if r, ok := t.rank[pairKey(sym[j], sym[j+1])]; ok && (best < 0 || r < best) {
					best, at = r, j
				}
			}
			if at < 0 {
				break
			}
			m := t.Merges[best]
			out := sym[:0]
			for j := 0; j < len(sym); j++ {
				if j+1 < len(sym) && sym[j] == m[0] && sym[j+1] == m[1] {
					out = append(out, 256+best)
					j++
				} else {
					out = append(out, sym[j])
				}
			}
			sym = out
		}
		ids := make([]int, len(sym))
		for j, s := range sym {
			ids[j] = int(s)
		}
		memo[string(c)] = ids
		dst = append(dst, ids...)
	})
	return dst
}

// Decode appends the bytes of ids to dst and returns it; it panics on an
// id outside the vocabulary (a programmer error).
func (t *Tokenizer) Decode(dst []byte, ids []int) []byte {
	for _, id := range ids {
		dst = append(dst, t.pieces[id]...)
	}
	return dst
}
