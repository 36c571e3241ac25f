// Package lm builds small language-model pairs on real text for whole-
// sequence simulations: a tokenizer (byte-level, or byte-pair encoding
// trained on the corpus), interpolated Kneser–Ney n-gram models of orders
// 1 to 6, an optional cache model over the context, and the corpora they
// are trained on (the Go toolchain's own source tree, and the licence texts
// every Debian system ships), with an on-disk cache keyed by provenance.
//
// Byte-pair encoding follows Sennrich, Haddow and Birch, "Neural Machine
// Translation of Rare Words with Subword Units" (ACL 2016): starting from
// the 256 byte values, the most frequent adjacent pair of symbols inside a
// pre-tokenised chunk is merged into a new symbol until the vocabulary has
// V symbols; encoding replays the merges in training order.
//
// The n-gram models are interpolated Kneser–Ney (Kneser and Ney, "Improved
// backing-off for m-gram language modeling", ICASSP 1995), in the
// interpolated form with one absolute discount per order of Chen and
// Goodman, "An Empirical Study of Smoothing Techniques for Language
// Modeling" (Harvard TR-10-98, 1998; Computer Speech and Language 13,
// 1999), §3.5 and eq. (26):
//
//	p_n(w|h) = max(c_n(h w) - D_n, 0)/c_n(h) + D_n·N1+(h •)/c_n(h) · p_{n-1}(w|h'),
//	p_0(w)   = 1/V,
//
// where h' drops the oldest token of h, c_N are raw counts at the highest
// order N, c_n for n < N are continuation counts N1+(• h w) (the number of
// distinct tokens seen before h w), N1+(h •) is the number of distinct
// followers of h, and D_n = n_1/(n_1 + 2 n_2) from the count-of-counts of
// the order (Ney, Essen and Kneser 1994). A context never seen at order n
// passes its mass down unchanged (p_n = p_{n-1}).
//
// The cache model (Kuhn and De Mori, "A cache-based natural language model
// for speech recognition", IEEE PAMI 12(6), 1990) mixes
//
//	p(w|ctx) = (1-λ)·p_KN(w|ctx) + λ·#{j : ctx[j-m:j] = suffix_m(ctx), ctx[j] = w} / #{j : ctx[j-m:j] = suffix_m(ctx)}
//
// with m the longest suffix length ≤ M that occurs earlier in the context
// (no cache term when none does), so the model copies earlier text as a
// real model does on editing tasks. Every model is a pure function of the
// context and implements sim.Model.
package lm // import "github.com/specsim/specsim/lm"
