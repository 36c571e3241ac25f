package algos

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// PointMass is point-mass verification: every draft token x_i is taken
// as a sample from the point mass at x_i, as n-gram and prompt-lookup
// candidates are (Fu et al., "Break the Sequential Dependency of LLM
// Inference Using Lookahead Decoding", arXiv 2402.02057, §3.4, sampling
// verification). For i = 1..γ it draws r_i ~ U[0,1) and accepts x_i while
//
//	r_i < p_i(x_i),
//
// and at the first rejection emits a token from p_i without x_i,
//
//	p'(t) = p_i(t)·[t ≠ x_i] / (1 - p_i(x_i)),
//
// or after γ acceptances the bonus token from p_{γ+1}. The emitted token
// has law p_i(x)·[t = x] + (1 - p_i(x))·p'(t) = p_i(t) whatever the draft,
// so the rule is lossless for drafts from any law (it ignores q), and it
// accepts less than token verification when the drafts come from q. It
// rejects a draft with p = q = 1/2 half of the time: a lossless rule need
// not accept where p/q = 1 (check's scripted edge cases do not ask it to).
//
// Randomness: one uniform per examined position, plus one for the
// emitted token.
type PointMass struct{}

// Accept runs one step.
func (PointMass) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		px := b.P[i].At(x)
		if !(rng.Float64() < px) {
			return sim.Outcome{Accepted: i, Next: sampleWithout(rng.Float64()*(1-px), b.P[i], x)}
		}
	}
	return bonus(rng, b)
}

// sampleWithout returns the token t ≠ x at which the cumulative mass of
// p without x first exceeds u (u < 1 - p(x)); the last token of positive
// mass other than x when rounding leaves u at the end.
func sampleWithout(u float64, p sim.Row, x int) int {
	last := -1
	for t := range p.Len() {
		if t == x {
			continue
		}
		if pt := p.At(t); pt > 0 {
			last = t
			if u -= pt; u < 0 {
				return t
			}
		}
	}
	return last
}

// Law writes the exact outcome law given b:
//
//	Pr(n, t) = Π_{i≤n} p_i(x_i) · p_{n+1}(t)·[t ≠ x_{n+1}],
//	Pr(γ, t) = Π_{i≤γ} p_i(x_i) · p_{γ+1}(t).
func (PointMass) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		p := b.P[i]
		for t := range p.Len() {
			if t != x {
				if pt := p.At(t); pt > 0 {
					dst.Add(i, t, reach*pt)
				}
			}
		}
		reach *= p.At(x)
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

func init() {
	Register(Entry{Info: Info{Name: "pointmass", AllocFree: true,
		Summary: "point-mass verification (n-gram candidates): accept x_i while r_i < p_i(x_i), then a token from p_i without x_i, or the bonus token; lossless for drafts from any law",
		Paper:   "Fu et al. 2024, arXiv 2402.02057, §3.4 (lookahead decoding, sampling verification)"},
		New: noParams(PointMass{})})
}
