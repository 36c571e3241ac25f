package algos

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Lenience is Leviathan's lenient speculative sampling (Leviathan, Kalman
// and Matias, arXiv 2211.17192, App. A.5): the draft token
// x_i is accepted while
//
//	u_i < p_i(x_i) / (l·q_i(x_i)),   l ∈ (0, 1],
//
// i.e. with probability min(1, p/(l·q)), so the acceptance rate is
//
//	α_l = Σ_x min(p(x)/l, q(x)) = (1/l) Σ_x min(p, l·q).
//
// The paper does not spell out the residual used after a rejection, so
// both readings exist:
//
//   - ResidualP false (rule "lenience", reading (a), l applied wherever q
//     appears): s = norm((p - l·q)+) = norm((p/l - q)+);
//   - ResidualP true (rule "lenience-residual-p", reading (b), only the
//     comparison changes, as in lucidrains/speculative-decoding):
//     s = norm((p - q)+).
//
// Both emit π(x) = min(q, p/l) + (1 - α_l)·s(x) ≤ p(x)/l (for (a):
// (1-α_l)/(1-l·α_l) ≤ 1/l; for (b): (1-α_l)/(1-β) ≤ 1 with
// β = Σ min(p, q) ≤ α_l), the paper's only guarantee; there is no lower
// bound. l = 1 is token verification, bit for bit on the same uniforms.
//
// Randomness: as Token, one uniform per examined position, one for the
// emitted token.
type Lenience struct {
	L         float64
	ResidualP bool
}

func (r Lenience) decide(_, _ sim.Row) decision {
	w := 1 / r.L
	if r.ResidualP {
		w = 1
	}
	return decision{mode: modeRatio, k: r.L, corr: residualCorrection(w)}
}

// Accept runs one step.
func (r Lenience) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome { return chainAccept(r, rng, b) }

// Law writes the exact outcome law given b.
func (r Lenience) Law(b *sim.Block, dst *sim.Law) error { return chainLaw(r, b, dst) }

var lenienceParam = Param{Name: "l", Default: 0.5, Min: 0, Max: 1, MinOpen: true,
	Doc: "lenience l in (0, 1]: accept with probability min(1, p/(l·q)); l = 1 is token verification"}

// lenienceGrid is both lenience rules' lossy-frontier grid, from the
// strict point l = 1 down.
var lenienceGrid = []float64{1, 0.9, 0.7, 0.5, 0.3, 0.2, 0.1, 0.05}

func init() {
	Register(Entry{Info: Info{Name: "lenience", AllocFree: true, Lossy: true,
		Summary: "Leviathan lenience: accept w.p. min(1, p/(l·q)), residual norm((p - l·q)+); emits π ≤ p/l",
		Paper:   "Leviathan et al. 2023, arXiv 2211.17192, App. A.5 (residual reading (a))",
		Params:  []Param{lenienceParam}, Strict: Params{"l": 1},
		Frontier: &Sweep{Param: "l", Values: lenienceGrid}},
		New: func(ps Params) (sim.Algorithm, error) { return Lenience{L: ps["l"]}, nil }})
	Register(Entry{Info: Info{Name: "lenience-residual-p", AllocFree: true, Lossy: true,
		Summary: "Leviathan lenience with the unscaled residual norm((p - q)+) (lucidrains reading); emits π ≤ p/l",
		Paper:   "Leviathan et al. 2023, arXiv 2211.17192, App. A.5 (residual reading (b), lucidrains/speculative-decoding)",
		Params:  []Param{lenienceParam}, Strict: Params{"l": 1},
		Frontier: &Sweep{Param: "l", Values: lenienceGrid}},
		New: func(ps Params) (sim.Algorithm, error) { return Lenience{L: ps["l"], ResidualP: true}, nil }})
}
