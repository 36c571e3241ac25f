package sim

import (
	"context"
	"fmt"
	"math"
)

// ExactTol is the largest |π(s) - p(s)| over sequences s for which Exact
// calls a rule lossless. The engine works in float64 on exact model rows,
// so a lossless rule lands within a few ulps of the target (about 1e-16);
// 1e-12 leaves room for the sums while any real bias is far larger.
const ExactTol = 1e-12

// Limits of the exact engine: it enumerates V^γ drafts and keeps one mass
// per prefix of length ≤ L.
const (
	MaxExactDrafts = 1 << 20
	MaxExactLeaves = 1 << 22
)

// ExactConfig sets up an exact enumeration.
type ExactConfig struct {
	// Gamma is the draft length γ (at least 1).
	Gamma int
	// L is the number of emitted tokens whose joint law is compared; 0
	// means γ+1, everything one step can emit.
	L int
	// Context is the prefix before the step.
	Context []int
	// Greedy compares against argmax decoding of the target (for greedy
	// verification) instead of sampling from it.
	Greedy bool
}

// ExactResult reports an exact enumeration.
type ExactResult struct {
	V, Gamma, L int
	// ExpectedAccepted and ExpectedEmitted are per step, over the draft
	// law and the rule's own randomness.
	ExpectedAccepted, ExpectedEmitted float64
	// Accepted[n] is Pr(Accepted = n) per step, n = 0..γ.
	Accepted []float64
	SeqComparison
}

// SeqComparison compares the law π of the first L emitted tokens
// (continued with the target after the step) with the target's law p.
type SeqComparison struct {
	// MaxAbsError is max_s |π(s) - p(s)| over the V^L sequences s.
	MaxAbsError float64
	// TV, KL and KLReverse compare the two sequence laws:
	// TV(p, π), KL(p‖π) and KL(π‖p), in nats. Both KLs leave out the
	// rounding residue of the law arithmetic: a term whose first law has
	// mass below ExactTol where the second has exactly 0, which would
	// otherwise make the divergence +Inf for a lossless rule on rows with
	// exact zeros; a rule that really misses or invents sequences moves
	// more mass than that (and MaxAbsError shows it).
	TV, KL, KLReverse float64
	// Lossless is MaxAbsError < ExactTol.
	Lossless bool
	// First and TargetFirst are the laws of the first emitted token;
	// FirstTV is their total variation distance.
	First, TargetFirst []float64
	FirstTV            float64
	// Emitted and Target are the two sequence laws over V^L, indexed by
	// the sequence read as a base-V number (first token most significant).
	Emitted, Target []float64
}

// seqMass is the law of what one step emits, as the exact enumerations
// build it: mass[offset[d]+code] is the probability that the step emitted
// exactly the prefix of length d ≤ l after the context whose tokens, read
// as a base-v number (first token most significant), are code. Longer
// emissions count by their first l tokens.
type seqMass struct {
	v, l   int
	offset []int
	mass   []float64
}

func newSeqMass(v, l int) seqMass {
	s := seqMass{v: v, l: l, offset: make([]int, l+2)}
	for d := 0; d <= l; d++ {
		s.offset[d+1] = s.offset[d] + ipow(v, d)
	}
	s.mass = make([]float64, s.offset[l+1])
	return s
}

// add adds m to the emission of the tokens prefix followed by next
// (NoToken: nothing follows), cut to its first l tokens.
func (s seqMass) add(prefix []int, next int, m float64) {
	k := min(len(prefix), s.l)
	code := 0
	for _, x := range prefix[:k] {
		code = code*s.v + x
	}
	if next != NoToken && k < s.l {
		code = code*s.v + next
		k++
	}
	s.mass[s.offset[k]+code] += m
}

// compare finishes an exact enumeration (stopping with cancel.Err() when
// cancel is cancelled): the emitted law is continued with the target m
// down to depth l (in place), the target's own law after ctx is
// propagated from the root, and the two laws at depth l are compared.
func (s seqMass) compare(cancel context.Context, m Model, ctx []int) (SeqComparison, error) {
	v, l, offset, mass := s.v, s.l, s.offset, s.mass
	tgt := make([]float64, len(mass))
	tgt[0] = 1
	row := make([]float64, v)
	seq := make([]int, 0, len(ctx)+l)
	for d := 0; d < l; d++ {
		for code := 0; code < ipow(v, d); code++ {
			if code%ctxEvery == ctxEvery-1 && cancel.Err() != nil {
				return SeqComparison{}, cancel.Err()
			}
			i := offset[d] + code
			if mass[i] == 0 && tgt[i] == 0 {
				continue
			}
			seq = appendDigits(append(seq[:0], ctx...), code, d, v)
			m.Next(seq, row)
			child := offset[d+1] + code*v
			for t, pt := range row {
				mass[child+t] += mass[i] * pt
				tgt[child+t] += tgt[i] * pt
			}
		}
	}
	var c SeqComparison
	c.Emitted = mass[offset[l]:offset[l+1]]
	c.Target = tgt[offset[l]:offset[l+1]]
	c.First = Marginal(c.Emitted, v, l, 0)
	c.TargetFirst = Marginal(c.Target, v, l, 0)
	c.FirstTV = TV(c.TargetFirst, c.First)
	for s, pt := range c.Target {
		c.MaxAbsError = math.Max(c.MaxAbsError, math.Abs(c.Emitted[s]-pt))
	}
	c.TV = TV(c.Target, c.Emitted)
	c.KL = KL(withoutResidue(c.Target, c.Emitted), c.Emitted)
	c.KLReverse = KL(withoutResidue(c.Emitted, c.Target), c.Target)
	c.Lossless = c.MaxAbsError < ExactTol
	return c, nil
}

// withoutResidue returns pi, or a copy of it with the entries below
// ExactTol zeroed where p is 0 (see SeqComparison.KL).
func withoutResidue(pi, p []float64) []float64 {
	out := pi
	for s, v := range pi {
		if p[s] == 0 && v > 0 && v < ExactTol {
			if &out[0] == &pi[0] {
				out = append([]float64(nil), pi...)
			}
			out[s] = 0
		}
	}
	return out
}

// Exact enumerates every draft of a model pair, weighs each by its draft
// probability Π q_i(x_i), combines it with the rule's Law, continues with
// the target after the step, and compares the law of the first L emitted
// tokens with the target's. This is the zero-noise losslessness oracle of
// the harness (docs/architecture.md).
func Exact(pair Pair, rule Lawer, cfg ExactConfig) (ExactResult, error) {
	return ExactContext(context.Background(), pair, rule, cfg)
}

// ctxEvery is how many enumerated drafts or prefixes pass between two
// looks at the context: often enough to stop well within a second.
const ctxEvery = 1 << 10

// ExactContext is Exact stopping with ctx.Err() when ctx is cancelled
// (an enumeration has no partial result).
func ExactContext(ctx context.Context, pair Pair, rule Lawer, cfg ExactConfig) (ExactResult, error) {
	v := pair.P.Vocab()
	if pair.Q.Vocab() != v {
		return ExactResult{}, fmt.Errorf("%w: vocabulary mismatch: target has %d tokens and draft has %d", ErrBadDist, v, pair.Q.Vocab())
	}
	g := cfg.Gamma
	if g < 1 || g > MaxGamma {
		return ExactResult{}, fmt.Errorf("exact: gamma = %d; use 1 <= gamma <= 4 (at most %d)", g, MaxGamma)
	}
	l := cfg.L
	if l == 0 {
		l = g + 1
	}
	if l < 1 {
		return ExactResult{}, fmt.Errorf("exact: L = %d; compare at least one token", l)
	}
	if ipow(v, g) > MaxExactDrafts || ipow(v, l) > MaxExactLeaves {
		return ExactResult{}, fmt.Errorf("exact: V = %d with gamma = %d (L = %d) is too large to enumerate (V^gamma <= %d, V^L <= %d); use V <= 8 and gamma <= 4, or 'simulate check'", v, g, l, MaxExactDrafts, MaxExactLeaves)
	}
	for _, c := range cfg.Context {
		if c < 0 || c >= v {
			return ExactResult{}, fmt.Errorf("exact: context token %d outside the vocabulary [0, %d)", c, v)
		}
	}
	var target Model = pair.P
	if cfg.Greedy {
		target = Greedy{pair.P}
	}

	e := &enumerator{
		v: v, g: g, pair: pair, rule: rule, cancel: ctx,
		ctx:  append([]int(nil), cfg.Context...),
		seqs: newSeqMass(v, l),
	}
	e.accDist = make([]float64, g+1)
	e.pRows = make([][]float64, g+1)
	e.qRows = make([][]float64, g)
	e.blk = Block{Tokens: make([]int, g), P: make([]Row, g+1), Q: make([]Row, g), Ctx: -1}
	for i := range e.pRows {
		e.pRows[i] = make([]float64, v)
		e.blk.P[i] = F64(e.pRows[i])
	}
	for i := range e.qRows {
		e.qRows[i] = make([]float64, v)
		e.blk.Q[i] = F64(e.qRows[i])
	}
	if err := e.draft(0, 1); err != nil {
		return ExactResult{}, err
	}

	res := ExactResult{V: v, Gamma: g, L: l, ExpectedAccepted: e.acc, ExpectedEmitted: e.emit, Accepted: e.accDist}
	var err error
	res.SeqComparison, err = e.seqs.compare(ctx, target, cfg.Context)
	if err != nil {
		return ExactResult{}, err
	}
	return res, nil
}

type enumerator struct {
	v, g         int
	pair         Pair
	rule         Lawer
	ctx          []int
	seqs         seqMass
	pRows, qRows [][]float64
	blk          Block
	law          Law
	acc, emit    float64
	accDist      []float64
	cancel       context.Context // looked at every ctxEvery leaves
	leaves       int
}

// draft fills positions i.. of the draft recursively; w is the draft
// probability of the tokens so far.
func (e *enumerator) draft(i int, w float64) error {
	e.pair.P.Next(e.ctx, e.pRows[i])
	if i == e.g {
		return e.leaf(w)
	}
	e.pair.Q.Next(e.ctx, e.qRows[i])
	for x, qx := range e.qRows[i] {
		if qx <= 0 {
			continue
		}
		e.blk.Tokens[i] = x
		e.ctx = append(e.ctx, x)
		err := e.draft(i+1, w*qx)
		e.ctx = e.ctx[:len(e.ctx)-1]
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *enumerator) leaf(w float64) error {
	if e.leaves++; e.leaves%ctxEvery == 0 && e.cancel.Err() != nil {
		return e.cancel.Err()
	}
	err := e.rule.Law(&e.blk, &e.law)
	if tot := e.law.Total(); err != nil || math.Abs(tot-1) > 1e-9 {
		// Peaked rows (p ≈ q on the top token) leave residual masses the
		// cancelling identity of ResidualMass cannot resolve; recompute
		// with the direct sum. Laws that were fine keep their bits.
		e.law.precise = true
		err = e.rule.Law(&e.blk, &e.law)
		e.law.precise = false
	}
	if err != nil {
		return fmt.Errorf("exact: draft %v: %w", e.blk.Tokens, err)
	}
	if tot := e.law.Total(); math.Abs(tot-1) > 1e-9 {
		return fmt.Errorf("exact: the rule's law sums to %.12g, not 1, on draft %v", tot, e.blk.Tokens)
	}
	for n := 0; n <= e.g; n++ {
		for t := NoToken; t < e.v; t++ {
			pr := e.law.At(n, t)
			if pr == 0 {
				continue
			}
			if pr < 0 {
				return fmt.Errorf("exact: the rule's law has a negative entry %g at (accepted %d, next %d)", pr, n, t)
			}
			m := w * pr
			e.seqs.add(e.blk.Tokens[:n], t, m)
			e.acc += m * float64(n)
			e.accDist[n] += m
			if t == NoToken {
				e.emit += m * float64(n)
			} else {
				e.emit += m * float64(n+1)
			}
		}
	}
	return nil
}

// Marginal returns the law of the i-th token (0-based) of a sequence law
// over V^L as returned in ExactResult.Emitted or Target.
func Marginal(seq []float64, v, l, i int) []float64 {
	out := make([]float64, v)
	stride := ipow(v, l-1-i)
	for s, m := range seq {
		out[(s/stride)%v] += m
	}
	return out
}

// ipow returns b^e for b ≥ 0, saturating at ipowCap+1 (above every
// enumeration limit) so that it cannot overflow a 32-bit int.
func ipow(b, e int) int {
	const ipowCap = 1 << 30
	r := 1
	for range e {
		if b > 0 && r > ipowCap/b {
			return ipowCap + 1
		}
		r *= b
	}
	return r
}

// appendDigits appends the d base-v digits of code, most significant first.
func appendDigits(dst []int, code, d, v int) []int {
	n := len(dst)
	for range d {
		dst = append(dst, 0)
	}
	for j := d - 1; j >= 0; j-- {
		dst[n+j] = code % v
		code /= v
	}
	return dst
}
