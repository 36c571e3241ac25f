package algos

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// SampleToken is a scratch rule (token verification under another name)
// that shows what adding a lossless chain rule takes.
type SampleToken struct{}

// Accept runs one step.
func (SampleToken) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome { return Token{}.Accept(rng, b) }

// Law writes the exact outcome law given b.
func (SampleToken) Law(b *sim.Block, dst *sim.Law) { Token{}.Law(b, dst) }

func init() {
	Register(Entry{Info: Info{Name: "sample-token", AllocFree: true, Summary: "scratch copy of token verification",
		Paper: "Leviathan et al. 2023, arXiv 2211.17192"}, New: noParams(SampleToken{})})
}
