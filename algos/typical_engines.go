package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// The typical acceptance rules as engines ship them. Both keep the draft
// token x_i while
//
//	p_i(x_i) > τ_i = min(ε, δ·exp(-H̃(p_i))),   H̃(p) = -Σ_t p(t)·log(p(t) + 10⁻⁵),
//
// the entropy with the 10⁻⁵ guard inside the logarithm that both
// FasterDecoding/Medusa (medusa/model/utils.py, evaluate_posterior and
// get_typical_one_token) and vLLM (TypicalAcceptanceSampler,
// _evaluate_accepted_tokens) compute, and differ in the token emitted at
// the first rejection, position n+1:
//
//   - TypicalMedusa samples p_{n+1} truncated to {t : p_{n+1}(t) > τ_{n+1}}
//     and renormalised, or takes argmax p_{n+1} where no token passes
//     (Medusa's get_typical_one_token: the logits below the threshold set
//     to -inf);
//   - TypicalArgmax emits argmax p_{n+1} (vLLM PR 5131: "if no draft tokens
//     are accepted then we use greedy sampling", the recovered token of
//     _get_recovered_token_ids for every rejected position).
//
// After a fully accepted draft both emit a bonus token sampled from
// p_{γ+1}. The law per position of TypicalArgmax is
//
//	π(t) = q(t)·1{p(t) > τ} + (Σ_{x: p(x) ≤ τ} q(x))·1{t = argmax p},
//
// so a shipped typical sampler is held against the rule it implements
// (--conform typical-argmax), not against the harness's typical, whose
// fallback samples the truncated target and whose entropy has no guard.
// Both are lossy with no divergence bound and have no strict setting.
//
// Randomness: as Token (one uniform per examined position, unused by the
// deterministic test, and one for the emitted token).
type (
	TypicalMedusa struct{ Eps, Delta float64 }
	TypicalArgmax struct{ Eps, Delta float64 }
)

// entropyGuard is the constant both engines add inside the logarithm.
const entropyGuard = 1e-5

// guardedThreshold is min(eps, delta·exp(-H̃(p))).
func guardedThreshold(eps, delta float64, p sim.Row) float64 {
	h := 0.0
	for t := 0; t < p.Len(); t++ {
		if v := p.At(t); v > 0 {
			h -= v * math.Log(v+entropyGuard)
		}
	}
	return math.Min(eps, delta*math.Exp(-h))
}

func (r TypicalMedusa) decide(p, _ sim.Row) decision {
	return decided(&medusaDecisions, r, bits2(r.Eps, r.Delta), p, sim.Row{}, func() decision {
		thr := guardedThreshold(r.Eps, r.Delta, p)
		return decision{mode: modeAbove, thr: thr, corr: correction{trunc: true, thr: thr}}
	})
}

// decide's correction truncates p at +Inf: no token passes, so it is the
// argmax of p.
func (r TypicalArgmax) decide(p, _ sim.Row) decision {
	return decided(&argmaxDecisions, r, bits2(r.Eps, r.Delta), p, sim.Row{}, func() decision {
		thr := guardedThreshold(r.Eps, r.Delta, p)
		return decision{mode: modeAbove, thr: thr, corr: correction{trunc: true, thr: math.Inf(1)}}
	})
}

// Accept runs one step.
func (r TypicalMedusa) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	return chainAccept(r, rng, b)
}

// Law writes the exact outcome law given b.
func (r TypicalMedusa) Law(b *sim.Block, dst *sim.Law) error { return chainLaw(r, b, dst) }

// Accept runs one step.
func (r TypicalArgmax) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	return chainAccept(r, rng, b)
}

// Law writes the exact outcome law given b.
func (r TypicalArgmax) Law(b *sim.Block, dst *sim.Law) error { return chainLaw(r, b, dst) }

// typicalParams are the engines' parameters with Medusa's defaults
// (posterior_threshold 0.09, posterior_alpha 0.3; vLLM's defaults are the
// same).
func typicalParams() []Param {
	return []Param{
		{Name: "eps", Default: 0.09, Min: 0, Max: 1, Doc: "posterior_threshold eps in [0, 1] (a probability)"},
		{Name: "delta", Default: 0.3, Min: 0, Max: math.Inf(1), MaxOpen: true, Doc: "posterior_alpha delta >= 0 (Medusa: about sqrt(eps))"},
	}
}

// typicalFrontier is typical's sweep: eps with delta = sqrt(eps).
func typicalFrontier() *Sweep {
	return &Sweep{Param: "eps", Values: []float64{0.01, 0.03, 0.09, 0.2, 0.5},
		Extra: func(v float64) Params { return Params{"delta": math.Sqrt(v)} }}
}

func init() {
	Register(Entry{Info: Info{Name: "typical-medusa", AllocFree: true, Lossy: true,
		Summary:  "typical acceptance as Medusa's code runs it: keep x while p(x) > min(eps, delta·exp(-H)), H with the 1e-5 guard; fallback from the truncated target",
		Paper:    "Cai et al. 2024, arXiv 2401.10774 §2.3.1; FasterDecoding/Medusa medusa/model/utils.py (evaluate_posterior, get_typical_one_token)",
		Params:   typicalParams(),
		Frontier: typicalFrontier()},
		New: func(ps Params) (sim.Algorithm, error) { return TypicalMedusa{Eps: ps["eps"], Delta: ps["delta"]}, nil }})
	Register(Entry{Info: Info{Name: "typical-argmax", AllocFree: true, Lossy: true,
		Summary:  "typical acceptance as vLLM ships it: keep x while p(x) > min(eps, delta·exp(-H)), H with the 1e-5 guard; argmax of p at a rejection",
		Paper:    "vLLM TypicalAcceptanceSampler (vllm-project/vllm PRs 5131 and 5348), after Cai et al. 2024, arXiv 2401.10774 §2.3.1",
		Params:   typicalParams(),
		Frontier: typicalFrontier()},
		New: func(ps Params) (sim.Algorithm, error) { return TypicalArgmax{Eps: ps["eps"], Delta: ps["delta"]}, nil }})
}
