package main

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// myToken is token verification (Leviathan et al., arXiv 2211.17192,
// Algorithm 1): keep draft x_i while u_i < p_i(x_i)/q_i(x_i); at the first
// rejection n emit a token of norm((p_n - q_n)+), after γ acceptances a
// bonus token of p_γ. It keeps no state, so it allocates nothing.
type myToken struct{}

func (myToken) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	g := b.Gamma()
	for i, x := range b.Tokens {
		if rng.Float64()*b.Q[i].At(x) < b.P[i].At(x) {
			continue
		}
		return sim.Outcome{Accepted: i, Next: residual(rng, b.P[i], b.Q[i])}
	}
	return sim.Outcome{Accepted: g, Next: sample(rng, b.P[g])}
}

// residual draws from norm((p - q)+) by inverse CDF.
func residual(rng *rand.Rand, p, q sim.Row) int {
	z := 0.0
	for t := range p.Len() {
		z += max(p.At(t)-q.At(t), 0)
	}
	if z <= 0 { // float rounding with p == q: fall back to p
		return sample(rng, p)
	}
	u, last := rng.Float64()*z, -1
	for t := range p.Len() {
		if d := p.At(t) - q.At(t); d > 0 {
			last = t
			if u -= d; u < 0 {
				return t
			}
		}
	}
	return last
}

// sample draws from p by inverse CDF.
func sample(rng *rand.Rand, p sim.Row) int {
	u, last := rng.Float64()*p.Sum(), -1
	for t := range p.Len() {
		if pt := p.At(t); pt > 0 {
			last = t
			if u -= pt; u < 0 {
				return t
			}
		}
	}
	return last
}
