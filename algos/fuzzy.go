package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Fuzzy is fuzzy speculative decoding (Holsman, Huang, Dhingra, "Fuzzy
// Speculative Decoding for a Tunable Accuracy-Runtime Tradeoff", arXiv
// 2502.20704, ACL Findings 2025), with the Jensen–Shannon
// divergence as its divergence: at each position
//
//	if JSD(p_i, q_i) < T:  accept x_i unconditionally,
//	else:                  token verification's test u < p/q and residual norm((p - q)+).
//
// The per-position law is π = q where JSD < T and π = p elsewhere. JSD is
// in nats, in [0, log 2]; T = 0 never relaxes (token verification, bit for
// bit on the same uniforms) and T > log 2 accepts every position.
//
// Randomness: as Token, one uniform per examined position (also on
// unconditional acceptance) and one for the emitted token.
type Fuzzy struct{ T float64 }

func (f Fuzzy) decide(p, q sim.Row) decision {
	if !(f.T > 0) {
		return decision{mode: modeRatio, k: 1, corr: residualCorrection(1)}
	}
	return decided(&fuzzyDecisions, f, math.Float64bits(f.T), p, q, func() decision {
		if rowJS(p, q) < f.T {
			return decision{mode: modeAll, corr: residualCorrection(1)}
		}
		return decision{mode: modeRatio, k: 1, corr: residualCorrection(1)}
	})
}

// Accept runs one step.
func (f Fuzzy) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome { return chainAccept(f, rng, b) }

// Law writes the exact outcome law given b.
func (f Fuzzy) Law(b *sim.Block, dst *sim.Law) error { return chainLaw(f, b, dst) }

func init() {
	Register(Entry{Info: Info{Name: "fuzzy", AllocFree: true, Lossy: true,
		Summary: "fuzzy speculative decoding: accept outright where JSD(p, q) < T, else token verification",
		Paper:   "Holsman, Huang, Dhingra 2025, arXiv 2502.20704 (ACL Findings)",
		Params: []Param{{Name: "T", Default: 0.1, Min: 0, Max: math.Inf(1), MaxOpen: true,
			Doc: "JSD threshold T >= 0 in nats (JSD <= log 2); 0 is token verification"}},
		Strict:   Params{"T": 0},
		Frontier: &Sweep{Param: "T", Values: []float64{0, 0.01, 0.03, 0.1, 0.2, 0.4, 0.7}}},
		New: func(ps Params) (sim.Algorithm, error) { return Fuzzy{T: ps["T"]}, nil }})
}
