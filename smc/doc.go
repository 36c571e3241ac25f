// Package smc implements sequential Monte Carlo steering of language models
// (Lew, Zhi-Xuan, Grand and Mansinghka, "Sequential Monte Carlo Steering of
// Large Language Models using Probabilistic Programs", arXiv 2306.03081)
// over the harness's models (any sim.Model), with the without-replacement
// resampling of Fearnhead and Clifford ("On-line inference for hidden
// Markov models via particle filters", JRSS-B 65(4):887, 2003), baselines,
// planted bugs, and an exact oracle to judge them all.
//
// The data flow:
//
//  1. A Feynman–Kac model (Model) is a language model M (optionally
//     tempered), an EOS token, a horizon T and potentials G_t (Forbid,
//     EndWithin, Length, Keyword, Expert). Its partition function and
//     posterior are
//
//     Z = E_M[Π_t G_t(S_{t-1}, S_t)],   P(s) = M(s)·Π_t G_t(s)/Z,  s ∈ F,
//
//     F being the strings that end with EOS or reach T tokens.
//
//  2. Enumerate computes Z, P and the filtering posteriors P_t exactly on
//     small V and T.
//
//  3. A Sampler runs Algorithm 5 of Lew et al., arXiv 2306.03081 (smc_steer): N particles, each
//     unfinished one extended into K children weighted
//     w_i·G_t·N'/(K·N), finished ones carried with w_i·N'/N, then the N'
//     children resampled to N and multiplied by N/N'; Ẑ = (1/N)·Σ_i w_i.
//     The resampling step keeps the children with c*·ŵ ≥ 1 and fills the
//     remaining N − |I_det| slots by stratified sampling with spacing
//
//     α = Σ_{I_stoch} ŵ / (N − |I_det|) = 1/c*,
//
//     each selected child weighted W/c*, where
//
//     c* = inf{c > 0 : Σ_i min(1, c·ŵ_i) > N}
//
//     is found exactly by sort and scan (CStar). Then
//     E[Σ weights after] = Σ weights before, so Ẑ is unbiased. The seed's
//     transcription divides by |I_det| instead; that reading keeps neither
//     N particles nor an unbiased Ẑ (it selects about |I_det| children, and
//     none at all when I_det is empty) and is kept as a mutant, with the
//     other planted bugs (N/N' factor missing, resampled weights not reset,
//     LLaMPPL's find_c one past the consistent split) and a bisection
//     variant of c*.
//
//  4. Evaluate runs a scheme R times against the exact answers (Ẑ/Z, the
//     posterior's total variation, ESS, population sizes, per-string
//     unbiasedness of the unnormalised particle measure), and Check turns
//     that into a verdict with a stated level and power.
//
// Randomness is explicit: every run draws from
// sim.NewRand(seed, sim.StreamID(stream, run)), so results are
// bit-identical for any worker count; a seed reproduces a result only at
// the same commit.
package smc // import "github.com/specsim/specsim/smc"
