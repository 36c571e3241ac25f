package algos

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// SampleLossy is a scratch lossy rule (lenience under another name) that
// shows what adding a lossy rule with a strict point and a frontier sweep
// takes: a per-position decision, and Accept and Law from it.
type SampleLossy struct{ L float64 }

func (s SampleLossy) decide(p, q sim.Row) decision { return Lenience{L: s.L}.decide(p, q) }

// Accept runs one step.
func (s SampleLossy) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome { return chainAccept(s, rng, b) }

// Law writes the exact outcome law given b.
func (s SampleLossy) Law(b *sim.Block, dst *sim.Law) { chainLaw(s, b, dst) }

func init() {
	Register(Entry{Info: Info{Name: "sample-lossy", AllocFree: true, Lossy: true, Summary: "scratch copy of lenience",
		Paper: "Leviathan et al. 2023, arXiv 2211.17192, App. A.5", Params: []Param{lenienceParam},
		Strict: Params{"l": 1}, Frontier: &Sweep{Param: "l", Values: []float64{1, 0.5, 0.2}}},
		New: func(ps Params) (sim.Algorithm, error) { return SampleLossy{L: ps["l"]}, nil }})
}
