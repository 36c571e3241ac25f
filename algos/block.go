package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Block is block verification, Sun, Mendlovic, Leviathan, Aharoni, Ro,
// Beirami and Suresh, "Block Verification Accelerates Speculative
// Decoding" (arXiv 2403.10444, ICLR 2025, Algorithm 2).
// Rows are 0-based here: P[i], Q[i] are the target and draft rows after i
// accepted tokens, x_{i+1} = Tokens[i].
//
// Prefix weights (w_0 = 1):
//
//	w_i = min(w_{i-1} · p_i(x_i)/q_i(x_i), 1),            i = 1..γ,
//
// residual masses after accepting i tokens:
//
//	Z_i = Σ_x (w_i · P[i](x) - Q[i](x))+,                 i = 0..γ-1,
//
// and acceptance thresholds
//
//	h_i = Z_i / (Z_i + 1 - w_i)   for 1 ≤ i < γ   (1 if the denominator is 0),
//	h_γ = w_γ,   h_0 = 1.
//
// Since Z_i ≤ w_i·Σ_{x: w_i p > q} p(x) ≤ w_i and h is increasing in Z_i,
// h_i ≤ w_i/(w_i + 1 - w_i) = w_i; the code evaluates h_i as
// min(Z_i/(Z_i + 1 - w_i), w_i), the same number in exact arithmetic, so
// that rounding can never lift it above this bound.
//
// It draws η_1..η_γ ~ U[0,1) (all γ of them, in order, before anything
// else) and keeps the longest prefix whose test passes,
//
//	τ = max{ i : η_i < h_i }   (0 if none),
//
// which does not stop at the first failure: a later prefix can be kept
// although an earlier position "failed". It emits X_1..X_τ and then Y:
// the bonus Y ~ P[γ] if τ = γ, otherwise Y ~ norm((w_τ·P[τ] - Q[τ])+) (for
// τ = 0 the ordinary residual). The comparison is strict, so a threshold of
// 0 (a prefix containing a p = 0 token has w = 0, hence h = 0) is never
// passed, even by a coin of exactly 0.
//
// The emitted sequence has exactly the target's law for any q (Thm 1), and
// among verifiers that emit a draft prefix plus one token from the on-path
// rows it maximises the expected number of tokens per step (Thm 2), so it
// never does worse than token verification (Token). Under greedy (one-hot)
// targets every w_i is 0 or 1 and it reduces to token verification.
//
// Degenerate cases: where p = q at a position with w_i = 1, Z_i = 0 and the
// denominator Z_i + 1 - w_i is 0; h_i = 1 then (the blog sketch's
// random.choices gets all-zero weights there). Where w_i = 0, Z_i is 0
// without a pass over the vocabulary. If rounding in float32 rows leaves a
// residual with no positive entry, Y is drawn from P[τ] (its limit), in
// Accept and Law alike.
//
// The fast path: h_γ = w_γ needs no vocabulary pass; τ is found by testing
// i = γ, γ-1, … and stopping at the first success; and a test with
// η_i ≥ w_i fails without Z_i because h_i ≤ w_i. So Z_i is computed only
// for τ itself and for the i > τ with η_i < w_i — on most steps one or two
// of the γ passes, while BlockNaive computes all of them. Both forms draw the same uniforms in the same
// order and evaluate the same floating-point expressions, so their outcomes
// are identical bit for bit.
//
// Randomness: γ uniforms for the η's, then one for Y.
type Block struct{}

// BlockNaive is block verification in its straightforward form: it
// computes every Z_i and h_i and then τ = max{i : η_i < h_i} by a full
// scan. It is the reference the fast path (Block) is tested against, bit
// for bit; see Block for the rule and its citation.
type BlockNaive struct{}

// blockScratch is a step's per-position scratch, on the stack.
type blockScratch = [sim.MaxGamma + 1]float64

// blockWeights draws η_1..η_γ into eta[1..γ] and fills w[0..γ] with the
// prefix weights. Every form of the rule (and the mutant) starts here, so
// all of them consume the uniforms identically.
func blockWeights(rng *rand.Rand, b *sim.Block, eta, w *blockScratch) {
	g := len(b.Tokens)
	for i := 1; i <= g; i++ {
		eta[i] = rng.Float64()
	}
	w[0] = 1
	for i, x := range b.Tokens {
		w[i+1] = math.Min(w[i]*b.P[i].At(x)/b.Q[i].At(x), 1)
	}
}

// blockZ returns Z_i = Σ_x (w·p - q)+; it is exactly 0 for w = 0 without a
// pass (ResidualMass would return exactly 0 too).
func blockZ(w float64, p, q sim.Row) float64 {
	if w == 0 {
		return 0
	}
	return sim.ResidualMass(w, p, q)
}

// blockH returns h_i = min(Z_i/(Z_i + 1 - w_i), w_i), or 1 where the
// denominator is 0 (Z_i = 0 and w_i = 1: p = q at this position, so the
// next prefix is certain to pass). The min is the bound h_i ≤ w_i of the
// exact value (see Block), which the lazy form relies on.
//
// 1 - w is exact for w ≥ 1/2 (Sterbenz) and z + (1 - w) ≥ z under
// round-to-nearest, so h ≤ 1 without a clamp and Pr(τ = i) is never
// negative.
func blockH(z, w float64) float64 {
	d := z + (1 - w)
	if d <= 0 {
		return 1
	}
	return math.Min(z/d, w)
}

// blockNext draws Y at uniform u after keeping tau tokens: the bonus from
// P[γ] if tau = γ, otherwise norm((w·P[tau] - Q[tau])+) with mass z, and
// P[tau] if that residual is numerically empty.
func blockNext(u float64, b *sim.Block, tau int, w, z float64) int {
	if tau == len(b.Tokens) {
		return sim.SampleRow(u, b.P[tau])
	}
	if z > 0 {
		if y := sim.SampleResidual(u, w, b.P[tau], b.Q[tau], z); y >= 0 {
			return y
		}
	}
	return sim.SampleRow(u, b.P[tau])
}

// Accept runs one step with the lazy evaluation of the thresholds.
func (Block) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	o, _ := blockLazy(rng, b)
	return o
}

// blockLazy is Block.Accept; it also returns the number of Z_i it computed
// with a vocabulary pass (0..γ), for the benchmark's account of what the
// laziness saves.
func blockLazy(rng *rand.Rand, b *sim.Block) (sim.Outcome, int) {
	var eta, w blockScratch
	blockWeights(rng, b, &eta, &w)
	g := len(b.Tokens)
	if eta[g] < w[g] {
		return sim.Outcome{Accepted: g, Next: sim.SampleRow(rng.Float64(), b.P[g])}, 0
	}
	passes := 0
	for i := g - 1; i >= 0; i-- {
		if i > 0 && !(eta[i] < w[i]) {
			continue // h_i ≤ w_i ≤ η_i: fails whatever Z_i is
		}
		z := blockZ(w[i], b.P[i], b.Q[i])
		if w[i] != 0 {
			passes++
		}
		if i == 0 || eta[i] < blockH(z, w[i]) {
			return sim.Outcome{Accepted: i, Next: blockNext(rng.Float64(), b, i, w[i], z)}, passes
		}
	}
	panic("unreachable") // i = 0 always returns
}

// Accept runs one step, computing every Z_i first.
func (BlockNaive) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	var eta, w, z blockScratch
	blockWeights(rng, b, &eta, &w)
	g := len(b.Tokens)
	for i := 0; i < g; i++ {
		z[i] = blockZ(w[i], b.P[i], b.Q[i])
	}
	tau := 0
	for i := 1; i <= g; i++ {
		h := w[g]
		if i < g {
			h = blockH(z[i], w[i])
		}
		if eta[i] < h {
			tau = i
		}
	}
	return sim.Outcome{Accepted: tau, Next: blockNext(rng.Float64(), b, tau, w[tau], z[tau])}
}

// Law writes the exact outcome law given b:
//
//	Pr(τ = i) = h_i · Π_{j>i} (1 - h_j),   h_0 = 1,
//	Pr(γ, t) = Pr(τ = γ) · P[γ](t),
//	Pr(i, t) = Pr(τ = i) · norm((w_i·P[i] - Q[i])+)(t),   i < γ.
func (Block) Law(b *sim.Block, dst *sim.Law) error { return blockLaw(b, dst, false) }

// Law writes the exact outcome law (the same as Block's).
func (BlockNaive) Law(b *sim.Block, dst *sim.Law) error { return blockLaw(b, dst, false) }

// blockLaw writes the law of block verification or, with mutant set, of
// BlockTokenwise (h_i = w_i at every position, residual with w = 1).
func blockLaw(b *sim.Block, dst *sim.Law, mutant bool) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	var w, h blockScratch
	w[0] = 1
	for i, x := range b.Tokens {
		w[i+1] = math.Min(w[i]*b.P[i].At(x)/b.Q[i].At(x), 1)
	}
	h[0], h[g] = 1, w[g]
	for i := 1; i < g; i++ {
		if mutant {
			h[i] = w[i]
		} else {
			h[i] = blockH(blockZ(w[i], b.P[i], b.Q[i]), w[i])
		}
	}
	later := 1.0 // Π_{j>i} (1 - h_j)
	for i := g; i >= 0; i-- {
		mass := h[i] * later
		later *= 1 - h[i]
		switch {
		case i == g:
			dst.AddRow(g, mass, b.P[g])
		case mutant:
			addResidual(dst, i, mass, 1, b.P[i], b.Q[i])
		default:
			addResidual(dst, i, mass, w[i], b.P[i], b.Q[i])
		}
	}
	return nil
}

// addResidual adds mass·norm((w·p - q)+) to row n of dst, normalising by
// the directly summed positive part; if that is 0 it adds mass·p, the
// fallback Accept takes on a numerically empty residual.
func addResidual(dst *sim.Law, n int, mass, w float64, p, q sim.Row) {
	if mass == 0 {
		return
	}
	s := 0.0
	for t := 0; t < p.Len(); t++ {
		s += math.Max(0, w*p.At(t)-q.At(t))
	}
	if s <= 0 {
		dst.AddRow(n, mass, p)
		return
	}
	for t := 0; t < p.Len(); t++ {
		if d := w*p.At(t) - q.At(t); d > 0 {
			dst.Add(n, t, mass*d/s)
		}
	}
}

func init() {
	Register(Entry{Info: Info{Name: "block", AllocFree: true, Summary: "block verification: weights w_i = min(w_{i-1} p_i/q_i, 1), keep the longest prefix passing h_i = Z_i/(Z_i+1-w_i), correction from norm((w_tau p - q)+); evaluated lazily from the last position down",
		Paper: "Sun et al. 2024, arXiv 2403.10444 (ICLR 2025)"},
		New: noParams(Block{})})
}
