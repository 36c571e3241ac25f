package algos

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// This file holds what the lossy rules (lenience, mentored, typical,
// cascade-*, fuzzy) share: a per-position chain driver, the residual
// kinds they sample on rejection, and the exact per-position law π with
// its metrics.
//
// Every lossy rule here verifies a single draft chain position by
// position: at position i it accepts x_i with some probability c_i(x_i)
// that depends on (p_i, q_i, x_i), and at the first rejection it emits a
// token from a correction law that depends on (p_i, q_i) only; after a
// fully accepted draft it emits the bonus token from p_{γ+1}. The emitted
// law of one position is therefore
//
//	π(t) = q(t)·c(t) + (1 - Σ_x q(x)c(x))·s(t),
//
// which PositionLaw computes in O(V) and Law writes for whole blocks.

// lossyStep is one lossy rule's per-position set-up: decide returns the
// decision at a position with target row p and draft row q. It depends on
// (p, q) only, not on the draft token, so the law of a position is
// computed with one call.
type lossyStep interface {
	decide(p, q sim.Row) decision
}

// Acceptance modes of a decision.
const (
	// modeRatio: c(x) = p(x)/(k·q(x)) (k = 1 is token verification).
	modeRatio = iota
	// modeAll: accept every draft token, c = +Inf.
	modeAll
	// modeAbove: accept iff p(x) > thr (Medusa's typical acceptance).
	modeAbove
	// modeZeroCoin: accept every x with p(x) > 0, and x with p(x) = 0
	// iff u < coin (mentored decoding's a = 0 regime).
	modeZeroCoin
)

// decision is a rule's test and correction at one position.
type decision struct {
	mode int
	k    float64
	thr  float64
	// coin = 1 - zrej is the acceptance probability of p = 0 tokens in
	// modeZeroCoin; zrej is kept to compute the rejection mass without
	// cancellation.
	coin, zrej float64
	corr       correction
}

// reject returns the rejection probability of x, 1 - min(1, max(0, c)),
// computed without cancellation in modeZeroCoin.
func (d decision) reject(p, q sim.Row, x int) float64 {
	if d.mode == modeZeroCoin && p.At(x) == 0 {
		return d.zrej
	}
	return 1 - clamp01(d.test(p, q, x))
}

// test returns the threshold c compared with a uniform u ∈ [0,1): x is
// accepted iff u < c, so with probability min(1, max(0, c)).
func (d decision) test(p, q sim.Row, x int) float64 {
	switch d.mode {
	case modeAll:
		return math.Inf(1)
	case modeAbove:
		if p.At(x) > d.thr {
			return 1
		}
		return 0
	case modeZeroCoin:
		if p.At(x) > 0 {
			return math.Inf(1)
		}
		return d.coin
	}
	return p.At(x) / (d.k * q.At(x))
}

// correction is the law a rule emits after rejecting at a position.
type correction struct {
	// trunc selects the truncated target: p restricted to {t : p(t) > thr}
	// renormalised, or the one-hot argmax of p when no token passes.
	// Otherwise the correction is the residual norm((w·p - q)+), falling
	// back to p when rounding leaves it empty.
	trunc bool
	w     float64
	thr   float64
}

func residualCorrection(w float64) correction { return correction{w: w} }

// sample draws from the correction at u ∈ [0,1) by inverse CDF.
func (c correction) sample(u float64, p, q sim.Row) int {
	if c.trunc {
		return sampleTrunc(u, p, c.thr)
	}
	return residual(u, c.w, p, q)
}

// add adds mass·(correction law)(t) to dst at Accepted = n.
func (c correction) add(dst *sim.Law, n int, mass float64, p, q sim.Row) error {
	if mass == 0 {
		return nil
	}
	if c.trunc {
		z := truncMass(p, c.thr)
		if !(z > 0) {
			dst.Add(n, sim.ArgmaxRow(p), mass)
			return nil
		}
		for t := 0; t < p.Len(); t++ {
			if v := p.At(t); v > c.thr {
				dst.Add(n, t, mass*v/z)
			}
		}
		return nil
	}
	if sim.ResidualMass(c.w, p, q) > 0 {
		return dst.AddResidual(n, mass, c.w, p, q)
	}
	dst.AddRow(n, mass, p) // the same fallback as residual()
	return nil
}

// dense writes the correction law into dst (length V).
func (c correction) dense(dst, p, q []float64) {
	clear(dst)
	pr, qr := sim.F64(p), sim.F64(q)
	if c.trunc {
		z := truncMass(pr, c.thr)
		if !(z > 0) {
			dst[sim.Argmax(p)] = 1
			return
		}
		for t, v := range p {
			if v > c.thr {
				dst[t] = v / z
			}
		}
		return
	}
	z := sim.ResidualMass(c.w, pr, qr)
	if !(z > 0) {
		copy(dst, p)
		return
	}
	for t := range p {
		if d := c.w*p[t] - q[t]; d > 0 {
			dst[t] = d / z
		}
	}
}

// truncMass returns Σ_{t: p(t) > thr} p(t).
func truncMass(p sim.Row, thr float64) float64 {
	z := 0.0
	for t := 0; t < p.Len(); t++ {
		if v := p.At(t); v > thr {
			z += v
		}
	}
	return z
}

// sampleTrunc is the inverse-CDF sample at u of p truncated to
// {t : p(t) > thr} and renormalised; with no such token it returns the
// argmax of p (Medusa's fallback).
func sampleTrunc(u float64, p sim.Row, thr float64) int {
	z := truncMass(p, thr)
	if !(z > 0) {
		return sim.ArgmaxRow(p)
	}
	target := u * z
	c, last := 0.0, -1
	for t := 0; t < p.Len(); t++ {
		if v := p.At(t); v > thr {
			c += v
			last = t
			if c > target {
				return t
			}
		}
	}
	return last
}

// chainAccept runs one step of a per-position lossy rule. Randomness, the
// same as Token's so that strict settings reproduce it bit for bit: one
// uniform per examined position compared with "<", then one uniform for
// the emitted token (correction or bonus, inverse CDF).
func chainAccept[S lossyStep](s S, rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		d := s.decide(b.P[i], b.Q[i])
		if !(rng.Float64() < d.test(b.P[i], b.Q[i], x)) {
			return sim.Outcome{Accepted: i, Next: d.corr.sample(rng.Float64(), b.P[i], b.Q[i])}
		}
	}
	return bonus(rng, b)
}

// chainLaw writes the exact outcome law of chainAccept:
//
//	Pr(n, t) = Π_{i≤n} a_i · (1 - a_{n+1}) · s_{n+1}(t),  a_i = min(1, max(0, c_i(x_i))),
//	Pr(γ, t) = Π_{i≤γ} a_i · p_{γ+1}(t).
func chainLaw[S lossyStep](s S, b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		d := s.decide(b.P[i], b.Q[i])
		a := clamp01(d.test(b.P[i], b.Q[i], x))
		if err := d.corr.add(dst, i, reach*(1-a), b.P[i], b.Q[i]); err != nil {
			return err
		}
		reach *= a
		if reach == 0 {
			return nil
		}
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

func clamp01(c float64) float64 {
	if !(c > 0) { // also NaN
		return 0
	}
	return math.Min(1, c)
}

// PositionLaw returns the exact law π of the token a lossy rule emits at
// one position with target p and draft q (one step with γ = 1 and the
// rule's own randomness and the draft token marginalised), and its
// acceptance Σ_x q(x)·c(x):
//
//	π(t) = q(t)·c(t) + (1 - Σ_x q(x)c(x))·s(t).
//
// It is O(V) plus the rule's own per-position set-up (a sort for
// mentored). It equals sim.Exact(Fixed(p), Fixed(q), γ = 1, L = 1).First,
// which the tests check. It returns an error for a rule that is not one
// of this package's per-position rules or for an invalid pair.
func PositionLaw(rule sim.Algorithm, p, q []float64) (pi []float64, acceptance float64, err error) {
	s, ok := rule.(lossyStep)
	if !ok {
		return nil, 0, fmt.Errorf("algos: %T is not a per-position lossy rule; use sim.Exact with gamma = 1, L = 1", rule)
	}
	if err := sim.ValidatePair(p, q); err != nil {
		return nil, 0, err
	}
	pi, acceptance = decisionLaw(s.decide(sim.F64(p), sim.F64(q)), p, q)
	return pi, acceptance, nil
}

// decisionLaw returns π and the acceptance of one position's decision.
func decisionLaw(d decision, p, q []float64) (pi []float64, acceptance float64) {
	pr, qr := sim.F64(p), sim.F64(q)
	pi = make([]float64, len(p))
	rej := 0.0 // Σ q(1 - a) directly, not 1 - acceptance: no cancellation for tiny rejection masses
	for x, qx := range q {
		if qx <= 0 {
			continue
		}
		a := qx * clamp01(d.test(pr, qr, x))
		pi[x] += a
		acceptance += a
		rej += qx * d.reject(pr, qr, x)
	}
	if rej > 0 {
		res := make([]float64, len(p))
		d.corr.dense(res, p, q)
		for t := range pi {
			pi[t] += rej * res[t]
		}
	}
	return pi, acceptance
}

// Metrics compares an emitted law π with the target p at one position.
type Metrics struct {
	// Acceptance is the probability that the draft token is accepted.
	Acceptance float64 `json:"acceptance"`
	// KL is KL(p‖π) and KLReverse KL(π‖p), in nats (+Inf where a support
	// is missed).
	KL        float64 `json:"kl"`
	KLReverse float64 `json:"kl_reverse"`
	// TV is TV(p, π).
	TV float64 `json:"tv"`
	// MaxRatio is max_t π(t)/p(t) (+Inf if π(t) > 0 = p(t)); lenience
	// promises MaxRatio ≤ 1/l.
	MaxRatio float64 `json:"max_ratio"`
}

// Measure returns the Metrics of π against p with the given acceptance.
func Measure(p, pi []float64, acceptance float64) Metrics {
	return Metrics{Acceptance: acceptance, KL: sim.KL(p, pi), KLReverse: sim.KL(pi, p), TV: sim.TV(p, pi), MaxRatio: MaxRatio(pi, p)}
}

// PositionMetrics is PositionLaw followed by Measure.
func PositionMetrics(rule sim.Algorithm, p, q []float64) (Metrics, []float64, error) {
	pi, acc, err := PositionLaw(rule, p, q)
	if err != nil {
		return Metrics{}, nil, err
	}
	return Measure(p, pi, acc), pi, nil
}

// MaxRatio returns max_t pi(t)/p(t) over t with pi(t) > 0 (+Inf if some
// pi(t) > 0 = p(t); 0 for an all-zero pi).
func MaxRatio(pi, p []float64) float64 {
	r := 0.0
	for t, v := range pi {
		switch {
		case v <= 0:
		case p[t] > 0:
			r = math.Max(r, v/p[t])
		default:
			return math.Inf(1)
		}
	}
	return r
}

// rowMax returns max_t r(t).
func rowMax(r sim.Row) float64 { return r.At(sim.ArgmaxRow(r)) }

// rowEntropy returns -Σ r log r in nats.
func rowEntropy(r sim.Row) float64 {
	h := 0.0
	for t := 0; t < r.Len(); t++ {
		if v := r.At(t); v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// rowTV returns ½ Σ |p - q|.
func rowTV(p, q sim.Row) float64 {
	s := 0.0
	for t := 0; t < p.Len(); t++ {
		s += math.Abs(p.At(t) - q.At(t))
	}
	return s / 2
}

// rowJS returns the Jensen–Shannon divergence in nats (sim.JS on rows).
func rowJS(p, q sim.Row) float64 {
	s := 0.0
	for t := 0; t < p.Len(); t++ {
		a, b := p.At(t), q.At(t)
		m := (a + b) / 2
		if a > 0 {
			s += a * math.Log(a/m)
		}
		if b > 0 {
			s += b * math.Log(b/m)
		}
	}
	return math.Max(s/2, 0)
}

// rowKL returns KL(p‖q) in nats, +Inf where q(t) = 0 < p(t).
func rowKL(p, q sim.Row) float64 {
	s := 0.0
	for t := 0; t < p.Len(); t++ {
		a := p.At(t)
		if a == 0 {
			continue
		}
		b := q.At(t)
		if b == 0 {
			return math.Inf(1)
		}
		s += a * math.Log(a/b)
	}
	return math.Max(s, 0)
}
