package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Token is token verification, the speculative sampling rule of Leviathan,
// Kalman and Matias, "Fast Inference from Transformers via Speculative
// Decoding" (arXiv 2211.17192, Algorithm 1), and of Chen et al.,
// "Accelerating Large Language Model Decoding with Speculative Sampling"
// (arXiv 2302.01318, Algorithm 2; their p and q are swapped).
//
// For i = 1..γ it draws r_i ~ U[0,1) and accepts x_i while
//
//	r_i < p_i(x_i) / q_i(x_i),
//
// i.e. with probability min(1, p_i/q_i). At the first rejection, position
// n+1, it emits a token from the residual
//
//	p'(x) = norm((p_{n+1}(x) - q_{n+1}(x))+),
//
// and after accepting all γ tokens the bonus token from p_{γ+1}. The
// emitted sequence has exactly the target's law for any q (Leviathan
// App. A.1). The comparison is strict, so a draft token with p = 0 is never
// accepted, even by a coin of exactly 0.
//
// With NoBonus set it emits nothing after a fully accepted draft: still
// lossless (the next step samples that token), but fewer tokens per step.
//
// Randomness: one uniform per examined position, plus one for the
// emitted token.
type Token struct{ NoBonus bool }

// Accept runs one step.
func (t Token) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if !(rng.Float64() < b.P[i].At(x)/b.Q[i].At(x)) {
			return sim.Outcome{Accepted: i, Next: residual(rng.Float64(), 1, b.P[i], b.Q[i])}
		}
	}
	if t.NoBonus {
		return sim.Outcome{Accepted: len(b.Tokens), Next: sim.NoToken}
	}
	return bonus(rng, b)
}

// bonus is the outcome after a fully accepted draft, shared by the chain
// rules: all γ draft tokens kept and the bonus token drawn from p_{γ+1}
// by inverse CDF at one uniform.
func bonus(rng *rand.Rand, b *sim.Block) sim.Outcome {
	g := len(b.Tokens)
	return sim.Outcome{Accepted: g, Next: sim.SampleRow(rng.Float64(), b.P[g])}
}

// Law writes the exact outcome law given b:
//
//	Pr(n, t) = Π_{i≤n} a_i · (1 - a_{n+1}) · p'_{n+1}(t),  a_i = min(1, p_i(x_i)/q_i(x_i)),
//	Pr(γ, t) = Π_{i≤γ} a_i · p_{γ+1}(t).
func (t Token) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		a := math.Min(1, b.P[i].At(x)/b.Q[i].At(x))
		if err := dst.AddResidual(i, reach*(1-a), 1, b.P[i], b.Q[i]); err != nil {
			return err
		}
		reach *= a
	}
	if t.NoBonus {
		dst.Add(g, sim.NoToken, reach)
		return nil
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

// Greedy is greedy (argmax) verification, the T = 0 case of speculative
// decoding (Leviathan et al. §2.3; EAGLE/Medusa evaluate_posterior): x_i is
// kept while it equals argmax p_i, and the step ends with argmax p_{n+1}.
// It uses no randomness. It preserves argmax decoding of the target (the
// lowest index on ties), not sampling from it.
type Greedy struct{}

// Accept runs one step.
func (Greedy) Accept(_ *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if m := sim.ArgmaxRow(b.P[i]); x != m {
			return sim.Outcome{Accepted: i, Next: m}
		}
	}
	g := len(b.Tokens)
	return sim.Outcome{Accepted: g, Next: sim.ArgmaxRow(b.P[g])}
}

// Law writes the (deterministic) outcome law given b.
func (r Greedy) Law(b *sim.Block, dst *sim.Law) error {
	dst.Reset(len(b.Tokens), b.V())
	o := r.Accept(nil, b)
	dst.Add(o.Accepted, o.Next, 1)
	return nil
}

// ExactMatch is the naive "sampled exact match" of the fms-extras design
// note (foundation-model-stack/fms-extras issue 12): at each
// position draw a ground-truth token y_i ~ p_i independently of the draft,
// keep x_i iff x_i = y_i, and otherwise emit y_i and stop; the bonus token
// is y_{γ+1} ~ p_{γ+1}. On one chain every emitted token is a p-sample, so
// it is lossless, but it accepts x_i only with probability p_i(x_i), i.e.
// Σ_x p(x)q(x) ≤ Σ_x min(p, q) per position. With several candidates it is
// biased (see the multi-draft rules).
//
// Randomness: one uniform per examined position.
type ExactMatch struct{}

// Accept runs one step.
func (ExactMatch) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if y := sim.SampleRow(rng.Float64(), b.P[i]); y != x {
			return sim.Outcome{Accepted: i, Next: y}
		}
	}
	return bonus(rng, b)
}

// Law writes the exact outcome law: Pr(n, t) = Π_{i≤n} p_i(x_i) · p_{n+1}(t)
// for t ≠ x_{n+1}.
func (ExactMatch) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		for t := 0; t < b.V(); t++ {
			if t != x {
				dst.Add(i, t, reach*b.P[i].At(t))
			}
		}
		reach *= b.P[i].At(x)
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

func init() {
	Register(Entry{Info: Info{Name: "token", AllocFree: true, Summary: "token verification (speculative sampling): accept x_i while r_i < p_i(x_i)/q_i(x_i), then a token from norm((p-q)+), or the bonus token from p_{gamma+1}",
		Paper: "Leviathan et al. 2023, arXiv 2211.17192, Alg. 1; Chen et al. 2023, arXiv 2302.01318, Alg. 2"},
		New: noParams(Token{})})
	Register(Entry{Info: Info{Name: "token-nobonus", AllocFree: true, Summary: "token verification without the bonus token",
		Paper: "Leviathan et al. 2023, arXiv 2211.17192 (vLLM disable_bonus_tokens)"},
		New: noParams(Token{NoBonus: true})})
	Register(Entry{Info: Info{Name: "greedy", AllocFree: true, Summary: "greedy verification: keep draft tokens equal to argmax p", Greedy: true,
		Paper: "Leviathan et al. 2023, arXiv 2211.17192, §2.3 (T = 0)"},
		New: noParams(Greedy{})})
	Register(Entry{Info: Info{Name: "exact-match", AllocFree: true, Summary: "naive sampled exact match: keep x_i iff it equals an independent target sample y_i, else emit y_i (lossless on one chain; accepts with Σ p·q)",
		Paper: "foundation-model-stack/fms-extras issue 12 (2024)"},
		New: noParams(ExactMatch{})})
}
