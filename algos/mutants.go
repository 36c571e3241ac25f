package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// This file holds the mutants: token verification with one planted bug
// each, taken from bugs found in public samplers (docs/rules.md lists each with its thread). They
// are negative controls: every check in this harness must flag them.

// ResampleP resamples from p_{n+1} instead of the residual after a
// rejection, the classic bug that biases the emitted law towards p's mode.
type ResampleP struct{}

// Accept runs one step.
func (ResampleP) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if !(rng.Float64() < b.P[i].At(x)/b.Q[i].At(x)) {
			return sim.Outcome{Accepted: i, Next: sim.SampleRow(rng.Float64(), b.P[i])}
		}
	}
	return bonus(rng, b)
}

// Law writes the outcome law.
func (ResampleP) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		a := math.Min(1, b.P[i].At(x)/b.Q[i].At(x))
		dst.AddRow(i, reach*(1-a), b.P[i])
		reach *= a
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

// AlwaysAccept keeps every draft token and adds the bonus token: the law
// of the draft, not the target (vLLM's "synthetic" acceptance taken for a
// sampler).
type AlwaysAccept struct{}

// Accept runs one step.
func (AlwaysAccept) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	return bonus(rng, b)
}

// Law writes the outcome law.
func (AlwaysAccept) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	dst.AddRow(g, 1, b.P[g])
	return nil
}

// QMismatch computes the ratio and the residual with a q that differs from
// the q the draft was sampled from: the draft was sampled at temperature T
// from raw logits (the block's q rows are that processed law), but the rule
// uses the raw law norm(q^T). This is huggingface/transformers issue 47932
// (raw q returned, processed q sampled) and DeepSpec issue 31 in kind. At
// T = 1 the two coincide and the rule is exact.
type QMismatch struct{ T float64 }

// pow is (v/top)^T. For T = j/64 in (0, 1) (the default 0.5, the audit's
// plant 0.90625) it is a product of repeated square roots, v^(1/2)·v^(1/4)…
// over T's binary digits, with top 1 (v^T of a probability stays in
// float64's range): a full pass of math.Pow per examined position made
// large-vocabulary checks slow. For other T, scaling by the row's largest
// entry top leaves the raw law q^T/Σq^T as it is and keeps it in
// float64's range for any T > 0: at T = 1e300 every q(y)^T underflowed
// to 0 and the law was 0/0.
func (m QMismatch) pow(v, top float64) float64 {
	if k, ok := m.dyadic(); ok {
		r, s := 1.0, v
		for bit := 32; k != 0; bit >>= 1 {
			s = math.Sqrt(s)
			if k&bit != 0 {
				r *= s
				k &^= bit
			}
		}
		return r
	}
	return math.Pow(v/top, m.T)
}

// dyadic returns k with T = k/64 when T is such a fraction in (0, 1).
func (m QMismatch) dyadic() (int, bool) {
	k := m.T * 64
	return int(k), m.T > 0 && m.T < 1 && k == math.Trunc(k)
}

// rawNorm returns the row's largest entry top (1 for a dyadic T) and
// Σ_y pow(q(y), top), the normaliser of the raw law; raw(x) is then
// pow(q(x), top) / rawNorm. It is one pass over the vocabulary (two for
// other T), computed once per examined position.
func (m QMismatch) rawNorm(q sim.Row) (s, top float64) {
	top = 1
	if _, ok := m.dyadic(); !ok {
		top = 0
		for y := 0; y < q.Len(); y++ {
			top = math.Max(top, q.At(y))
		}
	}
	for y := 0; y < q.Len(); y++ {
		s += m.pow(q.At(y), top)
	}
	return s, top
}

// warp is a rule's law q' of the draft used in the ratio and the residual
// where the drafts were sampled from q: q'(x) = pow(q(x), top)/s with
// (s, top) = rawNorm(q), computed once per examined position (QMismatch,
// ReducedPrecision).
type warp interface {
	pow(v, top float64) float64
	rawNorm(q sim.Row) (s, top float64)
	// key tells the warps and their parameters apart in warpedOf's
	// cache (a value, so a lookup allocates nothing), and its bits place
	// the rows of two warps running side by side (the audit's cells) in
	// different slots.
	key() warpKey
}

// warpKey is a warp's kind and its parameter's bits.
type warpKey struct {
	kind string
	bits uint64
}

func (m QMismatch) key() warpKey { return warpKey{"q-mismatch", math.Float64bits(m.T)} }

// warpResidual returns z = Σ_t (p(t) - q'(t))+ and, if u ≥ 0, the
// inverse-CDF sample of that residual at u (-1 if it is empty).
func warpResidual(u float64, p sim.Row, qp []float64) (float64, int) {
	p32, p64 := p.Data()
	if p32 != nil {
		return warpResidualOf(u, p32, qp)
	}
	return warpResidualOf(u, p64, qp)
}

// warpResidualOf is warpResidual on p's storage, without a dispatch on
// its type at every token: the same terms in the same order, so the same
// z and token bit for bit.
func warpResidualOf[F float32 | float64](u float64, p []F, qp []float64) (float64, int) {
	qp = qp[:len(p)]
	z := 0.0
	for t, v := range p {
		if d := float64(v) - qp[t]; d > 0 || d != d { // max(0, d), NaN kept
			z += d
		}
	}
	if u < 0 {
		return z, -1
	}
	c, last := 0.0, -1
	for t, v := range p {
		if d := float64(v) - qp[t]; d > 0 {
			c += d
			last = t
			if c > u*z {
				return z, t
			}
		}
	}
	return z, last
}

// warpAccept is token verification with q' in the ratio and the residual.
func warpAccept[W warp](m W, rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		e := warpedOf(m, b.Q[i])
		if !(rng.Float64() < b.P[i].At(x)/e.qp[x]) {
			_, y := e.residual(rng.Float64(), b.P[i])
			if y < 0 {
				y = sim.SampleRow(rng.Float64(), b.P[i])
			}
			return sim.Outcome{Accepted: i, Next: y}
		}
	}
	return bonus(rng, b)
}

// warpLaw writes warpAccept's outcome law.
func warpLaw[W warp](m W, b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		qp := warpedOf(m, b.Q[i]).qp
		a := math.Min(1, b.P[i].At(x)/qp[x])
		if rej := reach * (1 - a); rej > 0 {
			z, _ := warpResidual(-1, b.P[i], qp)
			for t := 0; t < b.V(); t++ {
				if d := b.P[i].At(t) - qp[t]; d > 0 {
					dst.Add(i, t, rej*d/z)
				}
			}
		}
		reach *= a
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

// Accept runs one step.
func (m QMismatch) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome { return warpAccept(m, rng, b) }

// Law writes the outcome law.
func (m QMismatch) Law(b *sim.Block, dst *sim.Law) error { return warpLaw(m, b, dst) }

// ZeroCoin accepts x_i when r_i ≤ p_i(x_i)/q_i(x_i), an inclusive
// comparison: a draft token with p = 0 is accepted whenever the coin is
// exactly 0 (sgl-project/sglang issue 35771, where torch.rand can return
// 0). The bug lives on a set of coins of probability zero (2^-53 here), so
// it has no law distinct from Token's and no sampling test can see it: it
// is caught by the scripted-coin edge check (EdgeCheck in package check).
type ZeroCoin struct{}

// Accept runs one step.
func (ZeroCoin) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if !(rng.Float64() <= b.P[i].At(x)/b.Q[i].At(x)) {
			return sim.Outcome{Accepted: i, Next: residual(rng.Float64(), 1, b.P[i], b.Q[i])}
		}
	}
	return bonus(rng, b)
}

// BonusRow draws the bonus token from p_γ, the last draft position's
// target row, instead of p_{γ+1} (an off-by-one in the row index).
type BonusRow struct{}

// Accept runs one step.
func (BonusRow) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	return bonusFrom(rng, b, b.P[len(b.Tokens)-1])
}

// Law writes the outcome law.
func (BonusRow) Law(b *sim.Block, dst *sim.Law) error {
	return bonusFromLaw(b, dst, b.P[len(b.Tokens)-1])
}

// ExactMatchResample is the exact-match rule with a fresh target sample on
// a mismatch instead of the ground-truth sample it compared with
// (ml-explore/mlx-swift-lm PR 459): it accepts x w.p. p(x) and then
// resamples p, so it over-weights tokens both models favour.
type ExactMatchResample struct{}

// Accept runs one step.
func (ExactMatchResample) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if y := sim.SampleRow(rng.Float64(), b.P[i]); y != x {
			return sim.Outcome{Accepted: i, Next: sim.SampleRow(rng.Float64(), b.P[i])}
		}
	}
	return bonus(rng, b)
}

// Law writes the outcome law.
func (ExactMatchResample) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		px := b.P[i].At(x)
		dst.AddRow(i, reach*(1-px), b.P[i])
		reach *= px
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

func init() {
	const control = "negative control"
	Register(Entry{Info: Info{Name: "mutant-resample-p", AllocFree: true, Mutant: true, Paper: control + ": the residual of Leviathan et al. 2023, arXiv 2211.17192, App. A.1, replaced by p",
		Summary: "token verification that resamples from p instead of the residual"}, New: noParams(ResampleP{})})
	Register(Entry{Info: Info{Name: "mutant-always-accept", AllocFree: true, Mutant: true, Paper: control,
		Summary: "accepts every draft token (emits the draft law)"}, New: noParams(AlwaysAccept{})})
	Register(Entry{Info: Info{Name: "mutant-q-mismatch", AllocFree: true, Mutant: true, Paper: "huggingface/transformers issue 47932; deepseek-ai/DeepSpec issue 31",
		Summary: "ratio and residual computed with raw q = norm(q^T) while the draft was sampled from q",
		Params: []Param{{Name: "T", Default: 0.5, Min: 0, Max: math.Inf(1), MinOpen: true,
			Doc: "the temperature the draft was sampled at; T = 1 removes the bug"}}},
		New: func(p Params) (sim.Algorithm, error) { return QMismatch{T: p["T"]}, nil }})
	Register(Entry{Info: Info{Name: "mutant-zero-coin", AllocFree: true, Mutant: true, Paper: "sgl-project/sglang issue 35771",
		Summary: "inclusive comparison r <= p/q accepts a p = 0 draft token when the coin is exactly 0"}, New: noParams(ZeroCoin{})})
	Register(Entry{Info: Info{Name: "mutant-bonus-row", AllocFree: true, Mutant: true, Paper: control + ": the bonus row of Leviathan et al. 2023, arXiv 2211.17192, Alg. 1",
		Summary: "bonus token drawn from p_gamma instead of p_{gamma+1}"}, New: noParams(BonusRow{})})
	Register(Entry{Info: Info{Name: "mutant-exact-match-resample", AllocFree: true, Mutant: true, Paper: "ml-explore/mlx-swift-lm PR 459",
		Summary: "exact match that resamples p on a mismatch instead of emitting the compared sample"}, New: noParams(ExactMatchResample{})})
}
