package draft

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/specsim/specsim/sim"
)

// Lookup is prompt lookup decoding (Saxena 2023,
// github.com/apoorvumang/prompt-lookup-decoding, as transformers'
// find_candidate_pred_tokens): the draft is what followed the first
// earlier occurrence of the context's final n-gram, trying n = maxNgram
// down to 1 (FindCandidates gives the exact rule). It needs no draft model: each
// drafted token's row is one-hot, it draws no randomness and takes no
// draft forward pass.
type Lookup struct{ maxNgram int }

// NewLookup returns prompt lookup matching n-grams of up to maxNgram
// tokens.
func NewLookup(maxNgram int) (*Lookup, error) {
	if maxNgram < 1 {
		return nil, fmt.Errorf("drafter lookup: max ngram = %d; use >= 1", maxNgram)
	}
	return &Lookup{maxNgram: maxNgram}, nil
}

// LookupName is prompt lookup's name (New).
const LookupName = "lookup"

func init() {
	register(LookupName, func(c Config) (Drafter, error) {
		if c.Policy.Kind == PolicyConf {
			return Drafter{}, fmt.Errorf("drafter lookup: its candidates have no draft confidence; use policy fixed or oracle")
		}
		d, err := NewLookup(c.MaxNgram)
		if err != nil {
			return Drafter{}, err
		}
		return Drafter{Chain: d}, nil
	})
}

// Draft writes the candidates after ctx (up to gamma tokens, possibly
// none) with one-hot rows.
func (l *Lookup) Draft(_ *rand.Rand, ctx []int, gamma int, b *sim.Block, rows *Rows) {
	b.Tokens = FindCandidates(b.Tokens[:0], ctx, l.maxNgram, gamma)
	b.Q = b.Q[:0]
	for i, x := range b.Tokens {
		q := rows.Q(i)
		clear(q)
		q[x] = 1
		b.Q = append(b.Q, sim.F64(q))
	}
}

// Passes returns 0: lookup runs no draft model.
func (l *Lookup) Passes(int) int { return 0 }

// FindCandidates appends to dst the prompt-lookup candidates after ids:
// for n = maxNgram down to 1, the first earlier window equal to the last n
// tokens whose continuation of numPred tokens lies inside ids and does not
// start inside the final n-gram itself is returned; none gives no
// candidates. It follows transformers' find_candidate_pred_tokens (seed
// 004) exactly, including the full-length requirement end <= len(ids).
func FindCandidates(dst, ids []int, maxNgram, numPred int) []int {
	L := len(ids)
	for n := min(maxNgram, L); n >= 1; n-- {
		ngram := ids[L-n:]
		for idx := 0; idx+n <= L; idx++ {
			if !slices.Equal(ids[idx:idx+n], ngram) {
				continue
			}
			start, end := idx+n, idx+n+numPred
			if end <= L && start < L-n {
				return append(dst, ids[start:end]...)
			}
		}
	}
	return dst
}
