package seq

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/specsim/specsim/sim"
)

// Drafter names.
const (
	Chain  = "chain"
	Heads  = "heads"
	Lookup = "lookup"
	Tree   = "tree"
)

// Drafters lists the drafter names.
func Drafters() []string { return []string{Chain, Heads, Lookup, Tree} }

// Policy kinds.
const (
	Fixed  = "fixed"
	Conf   = "conf"
	Oracle = "oracle"
)

// Policy is a draft-length policy: Fixed drafts γ tokens; Conf stops after
// a drafted token x_i with q_i(x_i) < Threshold; Oracle drafts γ but is
// charged only for the accepted ones (an upper bound).
type Policy struct {
	Kind      string  `json:"kind"`
	Threshold float64 `json:"threshold,omitempty"`
}

// String renders the policy as ParsePolicy reads it.
func (p Policy) String() string {
	if p.Kind == Conf {
		return Conf + ":" + strconv.FormatFloat(p.Threshold, 'g', -1, 64)
	}
	return p.Kind
}

// ParsePolicy reads "fixed", "oracle" or "conf:τ" with τ in (0, 1).
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", Fixed:
		return Policy{Kind: Fixed}, nil
	case Oracle:
		return Policy{Kind: Oracle}, nil
	}
	if v, ok := strings.CutPrefix(s, Conf+":"); ok {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || !(t > 0 && t < 1) {
			return Policy{}, fmt.Errorf("policy %q: the confidence threshold must be a number in (0, 1)", s)
		}
		return Policy{Kind: Conf, Threshold: t}, nil
	}
	return Policy{}, fmt.Errorf("policy %q: use fixed, oracle or conf:THRESHOLD", s)
}

// stops reports whether the policy ends the draft after a token drafted
// with probability qx.
func (p Policy) stops(qx float64) bool { return p.Kind == Conf && qx < p.Threshold }

// chainDrafter samples the draft model autoregressively.
type chainDrafter struct{ q sim.Model }

// headsDrafter samples head i's row after the prefix, independently.
type headsDrafter struct{ heads []sim.Model }

// lookupDrafter is prompt lookup decoding.
type lookupDrafter struct{ maxNgram int }

// drafter fills the draft tokens and rows of a chain block.
type drafter interface {
	// draft writes up to gamma tokens after ctx into b.Tokens and their
	// rows into b.Q (backed by s), and returns the draft forward passes.
	// ctx may be appended to within its capacity (scratch).
	draft(rng *rand.Rand, s *scratch, ctx []int, gamma int, pol Policy, b *sim.Block) int
}

// scratch holds a worker's row buffers.
type scratch struct {
	v    int
	q, p [][]float64
}

func (s *scratch) qrow(i int) []float64 {
	for len(s.q) <= i {
		s.q = append(s.q, make([]float64, s.v))
	}
	return s.q[i]
}

func (s *scratch) prow(i int) []float64 {
	for len(s.p) <= i {
		s.p = append(s.p, make([]float64, s.v))
	}
	return s.p[i]
}

func (d chainDrafter) draft(rng *rand.Rand, s *scratch, ctx []int, gamma int, pol Policy, b *sim.Block) int {
	b.Tokens, b.Q = b.Tokens[:0], b.Q[:0]
	for i := range gamma {
		q := s.qrow(i)
		d.q.Next(append(ctx, b.Tokens...), q)
		x := sim.SampleRow(rng.Float64(), sim.F64(q))
		b.Tokens = append(b.Tokens, x)
		b.Q = append(b.Q, sim.F64(q))
		if pol.stops(q[x]) {
			break
		}
	}
	return len(b.Tokens)
}

func (d headsDrafter) draft(rng *rand.Rand, s *scratch, ctx []int, gamma int, pol Policy, b *sim.Block) int {
	b.Tokens, b.Q = b.Tokens[:0], b.Q[:0]
	for i := range min(gamma, len(d.heads)) {
		q := s.qrow(i)
		d.heads[i].Next(ctx, q)
		x := sim.SampleRow(rng.Float64(), sim.F64(q))
		b.Tokens = append(b.Tokens, x)
		b.Q = append(b.Q, sim.F64(q))
		if pol.stops(q[x]) {
			break
		}
	}
	return 1
}

func (d lookupDrafter) draft(_ *rand.Rand, s *scratch, ctx []int, gamma int, _ Policy, b *sim.Block) int {
	b.Tokens = FindCandidates(b.Tokens[:0], ctx, d.maxNgram, gamma)
	b.Q = b.Q[:0]
	for i, x := range b.Tokens {
		q := s.qrow(i)
		clear(q)
		q[x] = 1
		b.Q = append(b.Q, sim.F64(q))
	}
	return 0
}

// FindCandidates appends to dst the prompt-lookup candidates after ids:
// for n = maxNgram down to 1, the first earlier window equal to the last n
// tokens whose continuation of numPred tokens lies inside ids and does not
// start inside the final n-gram itself is returned; none gives no
// candidates. It follows transformers' find_candidate_pred_tokens (seed
// 004) exactly, including the full-length requirement end <= len(ids).
func FindCandidates(dst, ids []int, maxNgram, numPred int) []int {
	L := len(ids)
	for n := min(maxNgram, L); n >= 1; n-- {
		ngram := ids[L-n:]
		for idx := 0; idx+n <= L; idx++ {
			if !slices.Equal(ids[idx:idx+n], ngram) {
				continue
			}
			start, end := idx+n, idx+n+numPred
			if end <= L && start < L-n {
				return append(dst, ids[start:end]...)
			}
		}
	}
	return dst
}

// fillTarget writes the γ+1 target rows of b after ctx.
func fillTarget(m sim.Model, s *scratch, ctx []int, b *sim.Block) {
	b.P = b.P[:0]
	for i := 0; i <= len(b.Tokens); i++ {
		p := s.prow(i)
		m.Next(append(ctx, b.Tokens[:i]...), p)
		b.P = append(b.P, sim.F64(p))
	}
}

// Sequence is a chain drafter over a growing context: a BlockSource whose
// blocks are the speculative steps of one generation. Commit appends what
// a step emitted.
type Sequence struct {
	target sim.Model
	d      drafter
	gamma  int
	pol    Policy
	s      scratch
	ctx    []int
	passes int
}

// NewSequence returns the chain drafter of pair after prompt as a block
// source: each Next drafts up to gamma tokens from pair.Q (under the
// policy's stopping rule) and fills the target rows of pair.P.
func NewSequence(pair sim.Pair, prompt []int, gamma int, pol Policy) (*Sequence, error) {
	if gamma < 1 || gamma > sim.MaxGamma {
		return nil, fmt.Errorf("sequence: gamma = %d; use 1 <= gamma <= %d", gamma, sim.MaxGamma)
	}
	if pair.P == nil || pair.Q == nil || pair.P.Vocab() != pair.Q.Vocab() {
		return nil, fmt.Errorf("sequence: the pair needs a target and a draft over one vocabulary")
	}
	ctx := make([]int, len(prompt), len(prompt)+1024)
	copy(ctx, prompt)
	return &Sequence{target: pair.P, d: chainDrafter{pair.Q}, gamma: gamma, pol: pol, s: scratch{v: pair.P.Vocab()}, ctx: ctx}, nil
}

// Next drafts the next step after the current context into dst (its
// slices are reused) and fills its target rows.
func (q *Sequence) Next(rng *rand.Rand, dst *sim.Block) error {
	q.passes = q.d.draft(rng, &q.s, q.ctx, q.gamma, q.pol, dst)
	fillTarget(q.target, &q.s, q.ctx, dst)
	return nil
}

// Commit appends the tokens a step emitted to the context.
func (q *Sequence) Commit(b *sim.Block, o sim.Outcome) {
	q.ctx = append(q.ctx, b.Tokens[:o.Accepted]...)
	if o.Next != sim.NoToken {
		q.ctx = append(q.ctx, o.Next)
	}
}

// Context returns the current context (prompt and emitted tokens).
func (q *Sequence) Context() []int { return q.ctx }

var _ sim.BlockSource = (*Sequence)(nil)
