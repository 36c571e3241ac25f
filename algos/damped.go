package algos

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Damped is token verification (Leviathan et al., arXiv 2211.17192,
// Alg. 1) with its acceptance scaled by C ∈ (0, 1] and the residual that
// scaling calls for: x_i is kept with probability
//
//	a_i = C · min(1, p_i(x_i)/q_i(x_i)),
//
// and at the first rejection, position n+1, the emitted token is drawn
// from
//
//	r_{n+1}(t) = (p_{n+1}(t) − C·min(p_{n+1}(t), q_{n+1}(t))) / (1 − C·Σ_x min(p_{n+1}(x), q_{n+1}(x))).
//
// The token emitted at a position is then x with probability
// q(x)·a(x) + (1 − Σ_y q(y)a(y))·r(x) = C·min(p, q)(x) + p(x) − C·min(p, q)(x)
// = p(x), the argument of Leviathan App. A.1, so the rule is lossless for
// every C; C = 1 is token verification. It is a construction of this
// harness: a lossless rule whose law differs from token's, accepting less.
//
// Randomness: one uniform per examined position, plus one for the emitted
// token.
type Damped struct{ C float64 }

// Accept runs one step.
func (d Damped) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if !(rng.Float64() < d.C*math.Min(1, b.P[i].At(x)/b.Q[i].At(x))) {
			return sim.Outcome{Accepted: i, Next: d.residual(rng.Float64(), b.P[i], b.Q[i])}
		}
	}
	return bonus(rng, b)
}

// mass returns the residual's unnormalised mass at t.
func (d Damped) mass(p, q sim.Row, t int) float64 {
	return max(0, p.At(t)-d.C*math.Min(p.At(t), q.At(t)))
}

// residual draws from r by inverse CDF at u; p itself when r has no mass
// (C = 1 and p = q, where no position is ever rejected).
func (d Damped) residual(u float64, p, q sim.Row) int {
	z := 0.0
	for t := 0; t < p.Len(); t++ {
		z += d.mass(p, q, t)
	}
	if !(z > 0) {
		return sim.SampleRow(u, p)
	}
	c, last := 0.0, 0
	for t := 0; t < p.Len(); t++ {
		if m := d.mass(p, q, t); m > 0 {
			c += m
			last = t
			if c > u*z {
				return t
			}
		}
	}
	return last
}

// Law writes the exact outcome law given b:
//
//	Pr(n, t) = Π_{i≤n} a_i · (1 − a_{n+1}) · r_{n+1}(t),  Pr(γ, t) = Π_{i≤γ} a_i · p_{γ+1}(t).
func (d Damped) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		a := d.C * math.Min(1, b.P[i].At(x)/b.Q[i].At(x))
		if rej := reach * (1 - a); rej > 0 {
			z := 0.0
			for t := 0; t < b.V(); t++ {
				z += d.mass(b.P[i], b.Q[i], t)
			}
			if !(z > 0) {
				return fmt.Errorf("damped: position %d rejects with probability %g but its residual has no mass", i+1, 1-a)
			}
			for t := 0; t < b.V(); t++ {
				if m := d.mass(b.P[i], b.Q[i], t); m > 0 {
					dst.Add(i, t, rej*m/z)
				}
			}
		}
		reach *= a
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

func init() {
	Register(Entry{Info: Info{Name: "damped", AllocFree: true,
		Summary: "token verification accepting with C·min(1, p_i/q_i) and emitting from norm(p − C·min(p, q)) on a rejection: lossless for every C, token at C = 1",
		Paper:   "construction of this harness (Leviathan et al. 2023, arXiv 2211.17192, App. A.1's argument)",
		Params:  []Param{{Name: "C", Default: 0.5, Min: 0, Max: 1, MinOpen: true, Doc: "the factor on token verification's acceptance"}}},
		New: func(ps Params) (sim.Algorithm, error) { return Damped{C: ps["C"]}, nil }})
}
