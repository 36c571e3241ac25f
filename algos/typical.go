package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Typical is Medusa's typical acceptance on a single draft chain as the
// paper writes it (Cai et al., "Medusa", arXiv 2401.10774, §2.3.1): the
// draft token x_i is kept while
//
//	p_i(x_i) > τ_i = min(ε, δ·exp(-H(p_i))),   H(p) = -Σ p log p (nats),
//
// and the step stops at the first failure, position n+1, emitting a token
// from p_{n+1} truncated to {t : p_{n+1}(t) > τ_{n+1}} and renormalised
// (Medusa's "typical" sampling; the failed x_{n+1} is never in that set),
// or argmax p_{n+1} when no token passes. After a fully accepted draft the
// bonus token comes from p_{γ+1}. Defaults ε = 0.09 (posterior_threshold)
// and δ = 0.3 (posterior_alpha) are medusa_model.py's.
//
// The law per position is π(t) = q(t)·1{p(t) > τ} + (Σ_{p(x)≤τ} q(x))·p̃(t)
// with p̃ the truncated target: lossy with no divergence bound (KL(p‖π) is
// +Inf as soon as a token with 0 < p ≤ τ exists). No setting reproduces
// token verification: ε = δ = 0 accepts every token with p > 0.
//
// The engines compute it differently: Medusa's code and vLLM's
// TypicalAcceptanceSampler guard the entropy's logarithm (log(p + 10⁻⁵)),
// and vLLM emits the argmax at a rejection. Those are the rules
// typical-medusa and typical-argmax (typical_engines.go), against which a
// shipped sampler is held with --conform.
//
// Randomness: as Token (one uniform per examined position, unused by the
// deterministic test, and one for the emitted token), so runs stay
// aligned with the other rules under common random numbers.
type Typical struct{ Eps, Delta float64 }

func (r Typical) decide(p, _ sim.Row) decision {
	return decided(&typicalDecisions, r, bits2(r.Eps, r.Delta), p, sim.Row{}, func() decision {
		thr := math.Min(r.Eps, r.Delta*math.Exp(-rowEntropy(p)))
		return decision{mode: modeAbove, thr: thr, corr: correction{trunc: true, thr: thr}}
	})
}

// Accept runs one step.
func (r Typical) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome { return chainAccept(r, rng, b) }

// Law writes the exact outcome law given b.
func (r Typical) Law(b *sim.Block, dst *sim.Law) error { return chainLaw(r, b, dst) }

func init() {
	Register(Entry{Info: Info{Name: "typical", AllocFree: true, Lossy: true,
		Summary: "Medusa typical acceptance on one chain: keep x while p(x) > min(eps, delta·exp(-H(p)))",
		Paper:   "Cai et al. 2024, arXiv 2401.10774 §2.3.1 (as the paper writes it; the engines' forms are typical-medusa and typical-argmax)",
		Params: []Param{
			{Name: "eps", Default: 0.09, Min: 0, Max: 1, Doc: "posterior threshold eps in [0, 1] (a probability)"},
			{Name: "delta", Default: 0.3, Min: 0, Max: math.Inf(1), MaxOpen: true, Doc: "entropy-scaled threshold delta >= 0 (Medusa: about sqrt(eps))"},
		},
		// No strict point: eps = delta = 0 still keeps every draft token
		// with p > 0. Medusa recommends delta = sqrt(eps) (Cai et al., arXiv 2401.10774, §2.3.1).
		Frontier: &Sweep{Param: "eps", Values: []float64{0.01, 0.03, 0.09, 0.2, 0.5},
			Extra: func(v float64) Params { return Params{"delta": math.Sqrt(v)} }}},
		New: func(ps Params) (sim.Algorithm, error) { return Typical{Eps: ps["eps"], Delta: ps["delta"]}, nil }})
}
