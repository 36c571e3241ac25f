package algos

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/optimize"

	"github.com/specsim/specsim/sim"
)

// OptimumSearch is the outcome of SearchAcceptance.
type OptimumSearch struct {
	// Acceptance is the best acceptance R of a feasible point found
	// (KL(p‖π) ≤ D exactly, after projection), KL its divergence.
	Acceptance, KL float64
	// Starts is the number of seeded starts, Feasible how many ended at a
	// feasible point with acceptance above the lossless one.
	Starts, Feasible int
}

// SearchAcceptance maximises the acceptance R = Σ q·r over every
// single-position verification rule (r, s) subject to KL(p‖π) ≤ d,
// π = q·r + (1 - R)·s, numerically and independently of mentored
// decoding's closed form: an optimality check independent of
// Tran-Thien's derivation. It is meant for small vocabularies (V ≤ 8).
//
// Parameterisation without box constraints: r = sin²θ, s = φ²/Σφ²
// (squares rather than sigmoid/softmax, whose gradients vanish once a
// start saturates them and strand the search at a corner). The KL constraint is handled by an augmented Lagrangian
// (Nocedal & Wright, Numerical Optimization, 2nd ed., §17.4, inequality
// form): minimise
//
//	-R + (max(0, λ + μ·c)² - λ²)/(2μ),  c = KL(p‖π) - d,
//
// with gonum's BFGS on the analytic gradient, then λ ← max(0, λ + μc),
// μ ← 3μ, from λ = 0, μ = 10⁴ (a large first penalty keeps the iterates near the
// feasible set, where no coordinate of s collapses to a stationary zero), for 12 outer rounds. Each start's end point is made exactly
// feasible by mixing it with the lossless point (r = min(1, p/q), π = p):
// the set of achievable (R, π) is convex and KL(p‖·) convex, so
// KL(p‖π_t) is convex in the mixing weight t with KL = 0 at t = 0, and
// bisection finds the largest feasible t. The first start sits near the
// lossless rule (r = min(1, p/q), s ∝ (p - q)+ + 1e-4); the others draw
// θ ~ U(0, π/2), φ ~ N(0, 1) from rng. The result's
// Acceptance is a lower bound on the true optimum.
func SearchAcceptance(rng *rand.Rand, p, q []float64, d float64, starts int) (OptimumSearch, error) {
	if err := sim.ValidatePair(p, q); err != nil {
		return OptimumSearch{}, err
	}
	if !(d >= 0) || math.IsInf(d, 1) {
		return OptimumSearch{}, fmt.Errorf("search: D = %g; the KL budget must be a finite number >= 0", d)
	}
	if starts < 1 {
		return OptimumSearch{}, fmt.Errorf("search: starts = %d; use at least 1", starts)
	}
	v := len(p)
	beta := sim.Alpha(p, q)
	best := OptimumSearch{Acceptance: beta, Starts: starts}
	pr := &rsProblem{p: p, q: q, d: d, pi: make([]float64, v), r: make([]float64, v), s: make([]float64, v)}
	x := make([]float64, 2*v)
	for st := range starts {
		for i := range v {
			x[i] = rng.Float64() * math.Pi / 2
			x[v+i] = rng.NormFloat64()
		}
		if st == 0 { // the first start sits near the lossless rule
			for i := range v {
				x[i] = math.Asin(math.Sqrt(math.Min(1, p[i]/q[i])))
				x[v+i] = math.Sqrt(math.Max(p[i]-q[i], 0) + 1e-4)
			}
		}
		pr.lambda, pr.mu = 0, 1e4
		for range 12 {
			res, err := optimize.Minimize(optimize.Problem{Func: pr.f, Grad: pr.grad}, x,
				&optimize.Settings{GradientThreshold: 1e-11, MajorIterations: 2000}, &optimize.BFGS{})
			if res != nil && allFinite(res.X) {
				copy(x, res.X)
			} else if err != nil {
				break
			}
			c := pr.eval(x) - d
			pr.lambda = math.Max(0, pr.lambda+pr.mu*c)
			pr.mu = math.Min(3*pr.mu, 1e8)
		}
		kl := pr.eval(x)
		acc := pr.acc
		if kl > d { // project onto the feasible set along the segment to the lossless point
			pi := append([]float64(nil), pr.pi...)
			mix := make([]float64, v)
			at := func(t float64) float64 {
				for i := range mix {
					mix[i] = t*pi[i] + (1-t)*p[i]
				}
				return sim.KL(p, mix)
			}
			lo, hi := 0.0, 1.0
			for range 200 {
				mid := (lo + hi) / 2
				if at(mid) <= d {
					lo = mid
				} else {
					hi = mid
				}
			}
			kl = at(lo)
			acc = lo*acc + (1-lo)*beta
		}
		if kl <= d && acc > beta {
			best.Feasible++
		}
		if kl <= d && acc > best.Acceptance {
			best.Acceptance, best.KL = acc, kl
		}
	}
	return best, nil
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// rsProblem is the augmented-Lagrangian objective over x = (θ, φ).
type rsProblem struct {
	p, q, pi, r, s []float64
	d, lambda, mu  float64
	acc, z         float64
}

// eval fills r, s, π and acc from x and returns KL(p‖π).
func (pr *rsProblem) eval(x []float64) float64 {
	v := len(pr.p)
	th, ph := x[:v], x[v:]
	z := 0.0
	pr.acc = 0
	for i := range v {
		sn := math.Sin(th[i])
		pr.r[i] = sn * sn
		pr.s[i] = ph[i] * ph[i]
		z += pr.s[i]
		pr.acc += pr.q[i] * pr.r[i]
	}
	pr.z = z
	for i := range v {
		pr.s[i] /= z
		pr.pi[i] = pr.q[i]*pr.r[i] + (1-pr.acc)*pr.s[i]
	}
	kl := 0.0
	for i, a := range pr.p {
		if a > 0 {
			kl += a * math.Log(a/pr.pi[i])
		}
	}
	return kl
}

func (pr *rsProblem) f(x []float64) float64 {
	c := pr.eval(x) - pr.d
	m := math.Max(0, pr.lambda+pr.mu*c)
	return -pr.acc + (m*m-pr.lambda*pr.lambda)/(2*pr.mu)
}

// grad is the analytic gradient: with S = Σ_t p_t s_t/π_t and N = Σ φ²,
//
//	∂KL/∂θ_i = q_i (S - p_i/π_i) sin 2θ_i,   ∂R/∂θ_i = q_i sin 2θ_i,
//	∂KL/∂φ_j = -(1-R) (2φ_j/N) (p_j/π_j - S).
func (pr *rsProblem) grad(g, x []float64) {
	v := len(pr.p)
	c := pr.eval(x) - pr.d
	m := math.Max(0, pr.lambda+pr.mu*c)
	S := 0.0
	for t := range v {
		S += pr.p[t] * pr.s[t] / pr.pi[t]
	}
	for i := range v {
		dr := math.Sin(2 * x[i])
		ratio := pr.p[i] / pr.pi[i]
		g[i] = -pr.q[i]*dr + m*pr.q[i]*(S-ratio)*dr
		g[v+i] = m * (-(1 - pr.acc) * (2 * x[v+i] / pr.z) * (ratio - S))
	}
}
