package algos

import (
	"math"
	"math/rand/v2"
	"sync"

	"github.com/specsim/specsim/sim"
)

// This file holds the mutants the bug catalogue (bugs.go) adds to those of
// mutants.go: token verification with one planted bug each, every one
// with its exact law given the drafts, so that a check's likelihood can
// name it.

// BonusQ draws the bonus token from q_γ, the last draft row, instead of
// p_{γ+1}: the bonus taken from the drafter's distribution.
type BonusQ struct{}

// Accept runs one step.
func (BonusQ) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	return bonusFrom(rng, b, b.Q[len(b.Tokens)-1])
}

// Law writes the outcome law.
func (BonusQ) Law(b *sim.Block, dst *sim.Law) error {
	return bonusFromLaw(b, dst, b.Q[len(b.Tokens)-1])
}

// bonusFrom is token verification whose bonus token is redrawn from row
// (the bonus bugs): the token step draws its bonus with one uniform, and
// the redraw takes one more, so the mutant consumes the same stream shape.
func bonusFrom(rng *rand.Rand, b *sim.Block, row sim.Row) sim.Outcome {
	o := Token{}.Accept(rng, b)
	if o.Accepted == len(b.Tokens) {
		o.Next = sim.SampleRow(rng.Float64(), row)
	}
	return o
}

// bonusFromLaw is bonusFrom's law: token verification's, with the mass of
// a fully accepted draft spread over row instead of p_{γ+1}.
func bonusFromLaw(b *sim.Block, dst *sim.Law, row sim.Row) error {
	g := len(b.Tokens)
	if err := (Token{NoBonus: true}).Law(b, dst); err != nil {
		return err
	}
	reach := dst.At(g, sim.NoToken)
	dst.Add(g, sim.NoToken, -reach)
	dst.AddRow(g, reach, row)
	return nil
}

// RawResidual draws the correction by inverse CDF on the residual
// (p - q)+ without dividing by its mass z = Σ (p - q)+ = TV(p, q): a
// uniform past z runs off the end of the cumulative sum and is clamped to
// the last token of the vocabulary (a searchsorted-and-clamp pattern), so
// that token gets 1 - z of every rejection's mass.
type RawResidual struct{}

// rawResidual returns the clamped inverse-CDF sample of the unnormalised
// residual at u.
func rawResidual(u float64, p, q sim.Row) int {
	p32, p64 := p.Data()
	q32, q64 := q.Data()
	switch {
	case p32 != nil && q32 != nil:
		return rawResidualOf(u, p32, q32)
	case p64 != nil && q64 != nil:
		return rawResidualOf(u, p64, q64)
	}
	c := 0.0
	for t := 0; t < p.Len(); t++ {
		if d := p.At(t) - q.At(t); d > 0 {
			c += d
			if c > u {
				return t
			}
		}
	}
	return p.Len() - 1
}

// rawResidualOf is rawResidual on rows of one storage type, read without
// a dispatch at every token (the same terms in the same order).
func rawResidualOf[F float32 | float64](u float64, p, q []F) int {
	q = q[:len(p)]
	c := 0.0
	for t, v := range p {
		if d := float64(v) - float64(q[t]); d > 0 {
			c += d
			if c > u {
				return t
			}
		}
	}
	return len(p) - 1
}

// Accept runs one step.
func (RawResidual) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if !(rng.Float64() < b.P[i].At(x)/b.Q[i].At(x)) {
			return sim.Outcome{Accepted: i, Next: rawResidual(rng.Float64(), b.P[i], b.Q[i])}
		}
	}
	return bonus(rng, b)
}

// Law writes the outcome law: a rejection at position i puts
// (p_i(t) - q_i(t))+ on each t and 1 - z_i on token V-1.
func (RawResidual) Law(b *sim.Block, dst *sim.Law) error {
	g, v := len(b.Tokens), b.V()
	dst.Reset(g, v)
	reach := 1.0
	for i, x := range b.Tokens {
		a := math.Min(1, b.P[i].At(x)/b.Q[i].At(x))
		if rej := reach * (1 - a); rej > 0 {
			z := 0.0
			for t := 0; t < v; t++ {
				if d := b.P[i].At(t) - b.Q[i].At(t); d > 0 {
					dst.Add(i, t, rej*d)
					z += d
				}
			}
			dst.Add(i, v-1, rej*math.Max(0, 1-z))
		}
		reach *= a
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

// CoinReuse draws the correction with the same uniform r that rejected
// the draft token (a rejection means r ≥ a, so the correction's inverse
// CDF sees r ~ U[a, 1), not U[0, 1)), which moves the correction towards
// the residual's last tokens in index order.
type CoinReuse struct{}

// Accept runs one step.
func (CoinReuse) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if r := rng.Float64(); !(r < b.P[i].At(x)/b.Q[i].At(x)) {
			return sim.Outcome{Accepted: i, Next: residual(r, 1, b.P[i], b.Q[i])}
		}
	}
	return bonus(rng, b)
}

// Law writes the outcome law: the correction t after a rejection at
// position i has probability |[C(t-1), C(t)) ∩ [a_i, 1)|, C the
// normalised residual's cumulative sum in token order.
func (CoinReuse) Law(b *sim.Block, dst *sim.Law) error {
	g, v := len(b.Tokens), b.V()
	dst.Reset(g, v)
	reach := 1.0
	for i, x := range b.Tokens {
		a := math.Min(1, b.P[i].At(x)/b.Q[i].At(x))
		if reach > 0 && a < 1 {
			z := sim.ResidualMassDirect(1, b.P[i], b.Q[i])
			if z <= 0 {
				return sim.ErrEmptyResidual
			}
			c := 0.0
			for t := 0; t < v; t++ {
				d := b.P[i].At(t) - b.Q[i].At(t)
				if d <= 0 {
					continue
				}
				lo := math.Max(c/z, a)
				c += d
				if hi := math.Min(c/z, 1); hi > lo {
					dst.Add(i, t, reach*(hi-lo))
				}
			}
		}
		reach *= a
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

// SharedCoin tests every draft position against one uniform r drawn per
// step (uniforms shared across positions): x_1..x_n are kept while
// r < a_i, so the draft is accepted to position n with probability
// min(a_1, …, a_n) instead of their product.
type SharedCoin struct{}

// Accept runs one step.
func (SharedCoin) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	r := rng.Float64()
	for i, x := range b.Tokens {
		if !(r < b.P[i].At(x)/b.Q[i].At(x)) {
			return sim.Outcome{Accepted: i, Next: residual(rng.Float64(), 1, b.P[i], b.Q[i])}
		}
	}
	return bonus(rng, b)
}

// Law writes the outcome law: reach m_i = min(1, a_1, …, a_i); a rejection
// at position i has probability m_{i-1} - m_i and the usual residual.
func (SharedCoin) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		next := math.Min(reach, b.P[i].At(x)/b.Q[i].At(x))
		if err := dst.AddResidual(i, reach-next, 1, b.P[i], b.Q[i]); err != nil {
			return err
		}
		reach = next
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

// RatioShift reads the target row one position ahead: draft x_i is tested
// with p_{i+1}(x_i)/q_i(x_i) and corrected from norm((p_{i+1} - q_i)+) (an
// off-by-one in the index of the target's logits, which hold γ+1 rows for
// γ drafts); the bonus row p_{γ+1} is the right one.
type RatioShift struct{}

// Accept runs one step.
func (RatioShift) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if !(rng.Float64() < b.P[i+1].At(x)/b.Q[i].At(x)) {
			return sim.Outcome{Accepted: i, Next: residual(rng.Float64(), 1, b.P[i+1], b.Q[i])}
		}
	}
	return bonus(rng, b)
}

// Law writes the outcome law (token verification's with p_i replaced by
// p_{i+1} at the draft positions).
func (RatioShift) Law(b *sim.Block, dst *sim.Law) error {
	g := len(b.Tokens)
	dst.Reset(g, b.V())
	reach := 1.0
	for i, x := range b.Tokens {
		a := math.Min(1, b.P[i+1].At(x)/b.Q[i].At(x))
		if err := dst.AddResidual(i, reach*(1-a), 1, b.P[i+1], b.Q[i]); err != nil {
			return err
		}
		reach *= a
	}
	dst.AddRow(g, reach, b.P[g])
	return nil
}

// ReducedPrecision is the reduced-precision draft path: the drafts were
// sampled from q (the block's rows), but the ratio and the residual use
// q' = softmax(bf16(ℓ)), the draft's logits ℓ rounded to bfloat16 (8
// significant bits). The logits are ln q shifted so that the largest is
// reducedTopLogit: bf16's spacing between 16 and 32 is 2^-3, so q' departs
// from q by up to about 6% per token. It shares QMismatch's warped-q
// machinery.
type ReducedPrecision struct{}

// reducedTopLogit is the largest draft logit ReducedPrecision assumes:
// Gemma 2 soft-caps its final logits at 30, and other models' heads reach
// the same order.
const reducedTopLogit = 30

// bf16Bits is the bfloat16 nearest x (ties to even), through float32,
// as its 16 bits: the top half of the float32's.
func bf16Bits(x float64) uint32 {
	f := math.Float32bits(float32(x))
	f += 0x7fff + (f>>16)&1
	return f >> 16
}

// bf16 rounds x to the nearest bfloat16 (ties to even), through float32.
func bf16(x float64) float64 {
	return float64(math.Float32frombits(bf16Bits(x) << 16))
}

// bf16Weights is exp(b - reducedTopLogit) for each of the 2^16 bfloat16
// values b, indexed by b's bits, built once on first use: a bfloat16 has
// so few values that ReducedPrecision's exp is a table look-up (math.Exp
// over the vocabulary at every examined position was most of the
// audit's time), and the table holds math.Exp's own values, so the
// weights are unchanged to the bit.
var bf16Weights = sync.OnceValue(func() []float64 {
	w := make([]float64, 1<<16)
	for b := range w {
		w[b] = math.Exp(float64(math.Float32frombits(uint32(b)<<16)) - reducedTopLogit)
	}
	return w
})

// pow is the unnormalised weight exp(bf16(ℓ) - reducedTopLogit) of a
// token of probability v, ℓ = ln(v/top) + reducedTopLogit (0 for v = 0).
func (ReducedPrecision) pow(v, top float64) float64 {
	if v <= 0 {
		return 0
	}
	return bf16Weights()[bf16Bits(math.Log(v/top)+reducedTopLogit)]
}

func (ReducedPrecision) key() warpKey { return warpKey{"reduced-precision", 0x5eed_b16} }

// rawNorm returns the row's largest entry top and Σ_y pow(q(y), top).
func (m ReducedPrecision) rawNorm(q sim.Row) (s, top float64) {
	for y := 0; y < q.Len(); y++ {
		top = math.Max(top, q.At(y))
	}
	for y := 0; y < q.Len(); y++ {
		s += m.pow(q.At(y), top)
	}
	return s, top
}

// Accept runs one step.
func (m ReducedPrecision) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	return warpAccept(m, rng, b)
}

// Law writes the outcome law.
func (m ReducedPrecision) Law(b *sim.Block, dst *sim.Law) error { return warpLaw(m, b, dst) }

func init() {
	for _, e := range []Entry{
		{Info: Info{Name: "mutant-bonus-q", Summary: "bonus token drawn from the last draft row q_gamma instead of p_{gamma+1}"}, New: noParams(BonusQ{})},
		{Info: Info{Name: "mutant-residual-unnormalised", Summary: "correction by inverse CDF on (p-q)+ without dividing by its mass, clamped to the last token"}, New: noParams(RawResidual{})},
		{Info: Info{Name: "mutant-coin-reuse", Summary: "correction drawn with the uniform that rejected the draft token (U[a,1) instead of U[0,1))"}, New: noParams(CoinReuse{})},
		{Info: Info{Name: "mutant-shared-coin", Summary: "one uniform shared by every draft position's test: accepted to n w.p. min(a_1..a_n)"}, New: noParams(SharedCoin{})},
		{Info: Info{Name: "mutant-ratio-shift", Summary: "ratio and residual read the target row one position ahead, p_{i+1} for draft i"}, New: noParams(RatioShift{})},
		{Info: Info{Name: "mutant-reduced-precision", Summary: "ratio and residual use softmax of the draft logits rounded to bfloat16 (top logit 30), drafts sampled from q"}, New: noParams(ReducedPrecision{})},
	} {
		e.AllocFree, e.Mutant = true, true
		e.Paper = "negative control: " + bugOf(e.Name).Thread
		Register(e)
	}
}
