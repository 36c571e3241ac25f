package samples

import _ "embed"

// CharGram is a 4000-step log (γ = 4, V = 48, dense raw logits, sampled
// at temperature 0.8 with top-k 16) of a character-level interpolated
// 4-gram target against a bigram draft, both estimated from the license
// texts in /usr/share/common-licenses; written by data/samples/gen.
//
//go:embed chargram.parquet
var CharGram []byte

// CharGramName is the file name of CharGram.
const CharGramName = "chargram.parquet"
