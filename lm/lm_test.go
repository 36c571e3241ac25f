package lm

import (
	"bytes"
	"math"
	"testing"
	"time"
)

func TestBPERoundTrip(t *testing.T) {
	text := []byte("the cat sat on the mat; the cat ate the rat.\n\tfunc main() { x := 12 }\n")
	tok, err := TrainBPE([][]byte{text, text}, 300)
	if err != nil {
		t.Fatal(err)
	}
	if tok.V() <= 256 {
		t.Fatalf("no merges learned")
	}
	// the most frequent pair in "the" chunks: " t"+"h" or "t"+"h"
	ids := tok.Encode(nil, text)
	if got := tok.Decode(nil, ids); !bytes.Equal(got, text) {
		t.Fatalf("round trip: %q", got)
	}
	if len(ids) >= len(text) {
		t.Fatalf("BPE did not compress: %d ids for %d bytes", len(ids), len(text))
	}
	bt := ByteTokenizer()
	if got := bt.Encode(nil, text); len(got) != len(text) {
		t.Fatalf("byte tokenizer: %d ids for %d bytes", len(got), len(text))
	}
}

func TestBPEFirstMerge(t *testing.T) {
	// "aaab" chunks: pair (a,a) occurs twice per chunk and wins.
	tok, err := TrainBPE([][]byte{[]byte("aaab aaab aaab")}, 257)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Merges) != 1 || tok.Merges[0] != [2]int32{'a', 'a'} {
		t.Fatalf("merges = %v, want [[97 97]]", tok.Merges)
	}
}

func rowSum(p []float64) float64 {
	s := 0.0
	for _, v := range p {
		s += v
	}
	return s
}

// TestKNHandComputed checks a bigram model against Chen & Goodman's
// formula on a tiny corpus, by hand.
func TestKNHandComputed(t *testing.T) {
	docs := [][]int{{0, 1, 0, 1, 0, 2}}
	m, err := TrainKN(docs, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	// bigram counts: (0,1)=2 (1,0)=2 (0,2)=1: n1=1, n2=2 → D2 = 1/5.
	if math.Abs(m.D[2]-0.2) > 1e-15 {
		t.Fatalf("D2 = %g, want 0.2", m.D[2])
	}
	// unigram continuation counts: 1 ← {0}, 0 ← {1, start}, 2 ← {0}: N1+(•1)=1, N1+(•0)=2, N1+(•2)=1
	// total 4, 3 types, n1=2, n2=1 → D1 = 2/4 = 0.5; uni(w) = max(c-D,0)/4 + D·3/4·1/4.
	d1 := 0.5
	uni := []float64{(2 - d1) / 4, (1 - d1) / 4, (1 - d1) / 4, 0}
	for w := range uni {
		uni[w] += d1 * 3 / 4 / 4
	}
	row := make([]float64, 4)
	m.Next([]int{1, 0}, row)
	// context 0: followers 1 (2), 2 (1): c=3, two types.
	want := []float64{0, (2 - 0.2) / 3, (1 - 0.2) / 3, 0}
	for w := range want {
		want[w] += 0.2 * 2 / 3 * uni[w]
	}
	for w := range want {
		if math.Abs(row[w]-want[w]) > 1e-15 {
			t.Fatalf("p(%d|0) = %.17g, want %.17g", w, row[w], want[w])
		}
	}
	m.Next([]int{3}, row) // unseen context: the unigram row
	for w := range uni {
		if math.Abs(row[w]-uni[w]) > 1e-15 {
			t.Fatalf("p(%d|3) = %g, want %g", w, row[w], uni[w])
		}
	}
}

func TestPairRowsAndSpeed(t *testing.T) {
	start := time.Now()
	pr, err := NewPair("prose:order=6,V=1024,cache=0.3,bytes=120000", "order=2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trained in %v: %+v", time.Since(start), pr.Provenance)
	if err := pr.Check(); err != nil {
		t.Fatal(err)
	}
	ps, err := pr.Prompts(3, 64)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float64, pr.P.Vocab())
	for _, p := range ps {
		for l := 0; l <= len(p); l += 7 {
			for _, m := range []interface {
				Next([]int, []float64)
			}{pr.P, pr.Q} {
				m.Next(p[:l], row)
				if s := rowSum(row); math.Abs(s-1) > 1e-9 {
					t.Fatalf("row sums to %.12g", s)
				}
				for _, v := range row {
					if !(v > 0) {
						t.Fatalf("row has a non-positive entry %g", v)
					}
				}
			}
		}
	}
}

func TestCacheCopies(t *testing.T) {
	// a uniform base model: the cache term alone decides the mass above uniform.
	base := uniform(5)
	c := Cached{M: base, Lambda: 0.5, MaxMatch: 2}
	row := make([]float64, 5)
	c.Next([]int{1, 2, 3, 1, 2}, row) // suffix (1,2) seen once, followed by 3
	want := []float64{0.1, 0.1, 0.1, 0.6, 0.1}
	for w := range want {
		if math.Abs(row[w]-want[w]) > 1e-15 {
			t.Fatalf("row = %v, want %v", row, want)
		}
	}
	c.Next([]int{4, 0}, row) // no earlier occurrence of any suffix: base row
	for w := range row {
		if row[w] != 0.2 {
			t.Fatalf("row = %v, want uniform", row)
		}
	}
}

type uniform int

func (u uniform) Vocab() int { return int(u) }
func (u uniform) Next(_ []int, dst []float64) {
	for i := range dst {
		dst[i] = 1 / float64(u)
	}
}

// TestDiskCache: a second NewPair reads the models from the cache
// directory and gives the same rows and prompts.
func TestDiskCache(t *testing.T) {
	dir := t.TempDir()
	spec := "prose:order=3,V=300,bytes=30000,cache=0.2"
	a, err := NewPair(spec, "order=1,T=1.5", Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewPair(spec, "order=1,T=1.5", Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if a.Provenance.Cached || !b.Provenance.Cached {
		t.Fatalf("cached flags %v, %v; want false then true", a.Provenance.Cached, b.Provenance.Cached)
	}
	pa, _ := a.Prompts(2, 20)
	pb, _ := b.Prompts(2, 20)
	ra, rb := make([]float64, a.P.Vocab()), make([]float64, b.P.Vocab())
	for i := range pa {
		for _, m := range [][2]interface{ Next([]int, []float64) }{{a.P, b.P}, {a.Q, b.Q}} {
			m[0].Next(pa[i], ra)
			m[1].Next(pb[i], rb)
			for w := range ra {
				if ra[w] != rb[w] {
					t.Fatalf("cached model differs at prompt %d token %d: %g vs %g", i, w, ra[w], rb[w])
				}
			}
		}
	}
	if _, err := NewPair("prose:order=7", "order=2", Options{}); err == nil {
		t.Error("order 7 accepted")
	}
	if _, err := NewPair("prose:order=3", "code:order=2", Options{}); err == nil {
		t.Error("a draft on another corpus accepted")
	}
}
