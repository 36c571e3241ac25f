// Command gen writes the embedded sample log data/samples/chargram.parquet:
// a speculative run of a character-level 4-gram target against a bigram
// draft, both estimated from the license texts in /usr/share/common-licenses
// (a real English corpus present on Debian systems), logged as raw logits
// (log-probabilities) with temperature 0.8 and top-k 16.
//
//	go run ./data/samples/gen -out data/samples/chargram.parquet
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
)

// alphabet is the vocabulary: token i is alphabet[i]; every other rune
// maps to the last token, '#'.
const alphabet = "abcdefghijklmnopqrstuvwxyz .,;:'\"()-/0123456789#"

func tokenize(text string) []int {
	var out []int
	space := false
	for _, r := range strings.ToLower(text) {
		if r == '\n' || r == '\t' || r == '\r' || r == ' ' {
			if !space {
				out = append(out, strings.IndexByte(alphabet, ' '))
			}
			space = true
			continue
		}
		space = false
		i := strings.IndexRune(alphabet, r)
		if i < 0 {
			i = len(alphabet) - 1
		}
		out = append(out, i)
	}
	return out
}

// ngram is an interpolated character n-gram model (Jelinek–Mercer
// smoothing: p = Σ_k λ_k ML_k, with the weights of unseen contexts moved
// to the lower orders).
type ngram struct {
	v, order int
	counts   []map[string][]float64 // counts[k][ctx of length k] = next-token counts
	lambda   []float64              // weight of order k, k = 0..order
}

func newNgram(tokens []int, v, order int, lambda []float64) *ngram {
	m := &ngram{v: v, order: order, lambda: lambda}
	for k := 0; k <= order; k++ {
		m.counts = append(m.counts, map[string][]float64{})
	}
	for i := range tokens {
		for k := 0; k <= order && k <= i; k++ {
			key := key(tokens[i-k : i])
			c := m.counts[k][key]
			if c == nil {
				c = make([]float64, v)
				m.counts[k][key] = c
			}
			c[tokens[i]]++
		}
	}
	return m
}

func key(ctx []int) string {
	b := make([]byte, len(ctx))
	for i, t := range ctx {
		b[i] = byte(t)
	}
	return string(b)
}

func (m *ngram) Next(ctx []int, dst []float64) {
	clear(dst)
	rest := 0.0
	for k := m.order; k >= 0; k-- {
		w := m.lambda[k] + rest
		rest = 0
		if k > len(ctx) {
			rest = w
			continue
		}
		c := m.counts[k][key(ctx[len(ctx)-k:])]
		if c == nil {
			rest = w
			continue
		}
		n := 0.0
		for _, x := range c {
			n += x
		}
		for t, x := range c {
			dst[t] += w * x / n
		}
	}
	// Add-ε floor so that every token has positive probability.
	for t := range dst {
		dst[t] = dst[t]*(1-1e-4) + 1e-4/float64(m.v)
	}
}

func (m *ngram) Vocab() int { return m.v }

func main() {
	out := flag.String("out", "data/samples/chargram.parquet", "output file")
	dir := flag.String("corpus", "/usr/share/common-licenses", "directory of plain-text files")
	steps := flag.Int("steps", 4000, "steps to log")
	seed := flag.Uint64("seed", 20240601, "seed")
	flag.Parse()
	files, _ := filepath.Glob(filepath.Join(*dir, "*"))
	sort.Strings(files)
	var text strings.Builder
	var used []string
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		text.Write(b)
		text.WriteByte('\n')
		used = append(used, filepath.Base(f))
	}
	tokens := tokenize(text.String())
	if len(tokens) < 10000 {
		fmt.Fprintf(os.Stderr, "gen: corpus %s has only %d characters\n", *dir, len(tokens))
		os.Exit(1)
	}
	v := len(alphabet)
	target := newNgram(tokens, v, 3, []float64{0.01, 0.04, 0.15, 0.8})
	draft := newNgram(tokens, v, 1, []float64{0.1, 0.9})
	// Prompts: 40 contexts of 12 characters taken at evenly spaced corpus
	// positions.
	var prompts [][]int
	for k := 0; k < 40; k++ {
		i := (k*len(tokens))/40 + 1000
		prompts = append(prompts, tokens[i-12:i])
	}
	s := data.Sampling{Temperature: 0.8, TopK: 16, TopP: 1}
	pv := data.BuildProvenance("data/samples/gen", "chargram: target = interpolated 4-gram (λ = .01,.04,.15,.8), draft = interpolated bigram (λ = .1,.9), characters of "+*dir, *seed)
	pv.Extra = map[string]string{"corpus_files": strings.Join(used, ","), "corpus_chars": fmt.Sprint(len(tokens)),
		"alphabet": alphabet, "prompts": "40 contexts of 12 characters at evenly spaced corpus positions",
		"verification": "token verification (Leviathan et al. 2023, Alg. 1) on the processed rows"}
	cfg := data.RunConfig{Steps: *steps, Gamma: 4, StepsPerPrompt: 30, Seed: *seed, RunID: "chargram", Sampling: s, Logits: true, Prompts: prompts,
		Rule: algos.Token{}}
	pair := sim.Pair{Name: "chargram", P: target, Q: draft}
	err := data.WriteLog(*out, data.WriterOptions{Provenance: pv}, func(w *data.Writer) error {
		return data.LogRun(context.Background(), w, pair, "char-4gram", "char-bigram", cfg)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
