package algos

import (
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// BlockTokenwise is the bad port of block verification reported in
// vllm-project/vllm-ascend issue 7807 (fixed by PR 7808): "block verify" that keeps the longest passing prefix but tests
// each prefix with the token-wise criterion applied to the cumulative ratio
// (vllm-ascend PR 7603: "cumprod(target_probs / draft_probs) for joint
// acceptance"), and then draws the correction from the unchanged token
// residual. With Block's notation:
//
//	h_i = w_i = min(1, Π_{j≤i} p_j(x_j)/q_j(x_j))   for every i (not Z_i/(Z_i+1-w_i)),
//	τ = max{ i : η_i < h_i },
//	Y ~ norm((P[τ] - Q[τ])+)   (not norm((w_τ·P[τ] - Q[τ])+)),  bonus from P[γ].
//
// Why this combination: token-wise acceptance that stops at the first
// failure together with the unchanged residual is simply token verification
// (Token), which is lossless, so a mutant built that way would be a
// mislabelled correct rule and no check could (or should) flag it. The
// port is wrong because it searches for the longest passing prefix — as
// block verification does — while neither its thresholds nor its residual
// are block verification's: a prefix is kept with probability w_i although
// an earlier token failed, so tokens with p < q are over-emitted (on the
// two-token example p = (1/3, 2/3), q = (2/3, 1/3) at γ = 2 the first
// token is A with probability 1/2 instead of 1/3: sim.Exact reports
// max_abs_error 1/9 on the law of the first three tokens). At γ = 1 it coincides
// with token verification (h_1 = w_1, Z_0's residual has w_0 = 1), so the
// bug only shows from γ = 2 on.
//
// Randomness: γ uniforms for the η's, then one for Y (as Block).
type BlockTokenwise struct{}

// Accept runs one step.
func (BlockTokenwise) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	var eta, w blockScratch
	blockWeights(rng, b, &eta, &w)
	g := len(b.Tokens)
	tau := 0
	for i := g; i >= 1; i-- {
		if eta[i] < w[i] {
			tau = i
			break
		}
	}
	u := rng.Float64()
	if tau == g {
		return sim.Outcome{Accepted: g, Next: sim.SampleRow(u, b.P[g])}
	}
	return sim.Outcome{Accepted: tau, Next: residual(u, 1, b.P[tau], b.Q[tau])}
}

// Law writes the outcome law.
func (BlockTokenwise) Law(b *sim.Block, dst *sim.Law) error { return blockLaw(b, dst, true) }

func init() {
	Register(Entry{Info: Info{Name: "mutant-block-tokenwise", AllocFree: true, Mutant: true,
		Paper:   "vllm-project/vllm-ascend issue 7807 (PRs 7603, 7808)",
		Summary: "'block verify' port: longest prefix with eta_i < cumulative ratio w_i, correction from the unchanged residual (p-q)+"},
		New: noParams(BlockTokenwise{})})
}
