package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// LogToken is token verification (Leviathan et al., arXiv 2211.17192,
// Alg. 1) with the acceptance test taken in log space: x_i is kept while
//
//	log r_i < min(0, log p_i(x_i) - log q_i(x_i)),
//
// which for r_i ∈ [0,1) is the event r_i < min(1, p_i/q_i), so each
// position accepts with probability a_i = min(1, p_i(x_i)/q_i(x_i)) and
// the step has token verification's law (Leviathan App. A.1):
//
//	Pr(n, t) = Π_{i≤n} a_i · (1 - a_{n+1}) · norm((p_{n+1} - q_{n+1})+)(t),
//	Pr(γ, t) = Π_{i≤γ} a_i · p_{γ+1}(t).
//
// A draft token with p = 0 has log p = -Inf and is never kept, even by a
// coin of exactly 0 (log 0 = -Inf is not below -Inf).
//
// Randomness: one uniform per examined position, plus one for the emitted
// token.
type LogToken struct{}

// Accept runs one step.
func (LogToken) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		lr := math.Min(0, math.Log(b.P[i].At(x))-math.Log(b.Q[i].At(x)))
		if !(math.Log(rng.Float64()) < lr) {
			return sim.Outcome{Accepted: i, Next: residual(rng.Float64(), 1, b.P[i], b.Q[i])}
		}
	}
	return bonus(rng, b)
}

// Law writes the exact outcome law given b, the formula of the type's
// comment.
func (LogToken) Law(b *sim.Block, dst *sim.Law) error {
	return Token{}.Law(b, dst)
}

func init() {
	Register(Entry{Info: Info{Name: "log-token", AllocFree: true,
		Summary: "token verification with the test log r_i < min(0, log p_i(x_i) - log q_i(x_i)); the law of token",
		Paper:   "Leviathan et al. 2023, arXiv 2211.17192, Alg. 1"},
		New: noParams(LogToken{})})
}
