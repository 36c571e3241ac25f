package external

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// EdgeRows is the number of identical rows of an edge-case batch. Under
// identical scripted coins a sampler that takes every coin from the batch
// (Batch.uniforms, or rng.random and rng.uniform) gives every row the same
// outcome; one that draws from a generator of its own gives the rows of
// the first case (a residual of two tokens of mass ½) 16 equal outcomes
// with probability at most 2^-15 when it samples them independently.
const EdgeRows = 16

// Edge runs check.EdgeCheck's two scripted-coin cases through the
// protocol, each as a batch of EdgeRows identical rows with inline rows
// (V and γ of the run; tokens ≥ 3 have probability 0) whose generator's
// random() and uniform() draws, and Batch.uniforms, are exactly 0, then
// the largest value below 1:
//
//  1. p = (0, ½, ½), q = (½, ¼, ¼) at every position, drafts all token 0:
//     with a coin of exactly 0 a rule that compares r ≤ p/q inclusively
//     accepts a draft of target probability 0 (sglang issue 35771); no
//     lossless rule may emit a token of target probability 0, so a
//     failure is a violation;
//  2. p = q = (0.2, 0.3, 0.5), drafts all token 2, coins 1 - 2^-53:
//     Leviathan's rule keeps every draft (p/q = 1 > r). That is a
//     property of that rule, not of losslessness (a point-mass verifier
//     accepts x with probability p(x) and is lossless too), so a failure
//     is a violation only when conform, the law of the rule the run
//     tests conformance to, keeps every draft of this block with
//     probability 1; otherwise it is returned as a note.
//
// In step mode the implementation samples the drafts itself (with coins
// of 0 an inverse-CDF sampler draws token 0 in case 1). s, when set, is
// the run's sampling; the target law is then the transformed p.
//
// It returns the edge verdict and its message: check.Violated with the
// first violation; else check.NotExercised when the identical rows of a
// case gave different outcomes (the implementation drew coins the script
// does not set, so the cases did not test it), naming the case and the
// fix; else check.Passed. The note is case 2's; a protocol failure is
// returned as the error.
func (im *Impl) Edge(s *data.Sampling, conform sim.Lawer) (verdict, msg, note string, err error) {
	g, v := im.cfg.Gamma, im.cfg.V
	mk := func(vals ...float32) []float32 {
		r := make([]float32, v)
		copy(r, vals)
		return r
	}
	cases := []struct {
		coins  string
		p, q   []float32
		draft  int
		accept bool // Leviathan's rule keeps every draft
	}{
		{coinsZero, mk(0, 0.5, 0.5), mk(0.5, 0.25, 0.25), 0, false},
		{coinsMax, mk(0.2, 0.3, 0.5), mk(0.2, 0.3, 0.5), 2, true},
	}
	unused := ""
	for _, c := range cases {
		target, err := edgeTarget(s, c.p, v)
		if err != nil {
			return "", "", "", err
		}
		bs := make([]sim.Block, EdgeRows)
		for i := range bs {
			bs[i] = edgeBlock(g, c.p, c.q, c.draft)
		}
		outs := make([]sim.Outcome, EdgeRows)
		if err := im.steps(batchOpts{coins: c.coins}, bs, outs); err != nil {
			return "", "", "", err
		}
		what := map[string]string{coinsZero: "every coin exactly 0", coinsMax: "every coin 1-2^-53"}[c.coins]
		for i, o := range outs {
			if viol := edgeViolation(&bs[i], o, target, what); viol != "" {
				return check.Violated, viol, note, nil
			}
		}
		if n := distinctOutcomes(bs, outs); n > 1 && unused == "" {
			unused = fmt.Sprintf("the scripted coins were not used: with %s, %d identical rows gave %d different outcomes, so the implementation draws coins the harness does not script "+
				"(a generator of its own, seeded from rng.integers, say); take every coin from batch.uniforms(...) "+
				"(rng.random or rng.uniform in the functions of (p, q, ..., rng)) to let the edge cases test it", what, EdgeRows, n)
		}
		o := outs[0]
		if c.accept && o.Accepted != g {
			msg := fmt.Sprintf("edge: with p = q and %s the implementation rejected draft %d at position %d (Leviathan's rule keeps it: p/q = 1 > r)", what, bs[0].Tokens[o.Accepted], o.Accepted+1)
			if conform != nil && keepsAll(conform, &bs[0]) {
				return check.Violated, msg + "; the rule it is tested against keeps every draft here", note, nil
			}
			note = msg + "; a lossless rule need not (a point-mass verifier accepts with probability p), so this is not part of the verdict"
		}
	}
	if unused != "" {
		return check.NotExercised, unused, note, nil
	}
	return check.Passed, "", note, nil
}

// edgeBlock is an edge case's block: γ drafts of token draft, every
// position's rows p and q.
func edgeBlock(g int, p, q []float32, draft int) sim.Block {
	b := sim.Block{Tokens: make([]int, g), Q: make([]sim.Row, g), P: make([]sim.Row, g+1), Ctx: -1}
	for j := range b.Tokens {
		b.Tokens[j] = draft
		b.Q[j] = sim.F32(q)
	}
	for j := range b.P {
		b.P[j] = sim.F32(p)
	}
	return b
}

// edgeTarget is the target law of an edge case's rows p: p itself, or
// p after the run's sampling s.
func edgeTarget(s *data.Sampling, p []float32, v int) ([]float32, error) {
	if s == nil {
		return p, nil
	}
	var tr data.Transformer
	logits := make([]float32, v)
	for x, px := range p {
		logits[x] = float32(math.Log(float64(px)))
	}
	target := make([]float32, v)
	if err := tr.Apply(*s, target, logits); err != nil {
		return nil, err
	}
	return target, nil
}

// edgeViolation describes what no lossless sampler does in outcome o of
// block b (an invalid outcome, a token of target probability 0), or "".
func edgeViolation(b *sim.Block, o sim.Outcome, target []float32, what string) string {
	if o.Accepted < 0 {
		return fmt.Sprintf("edge: with %s the implementation gave an invalid outcome (see the outcomes component)", what)
	}
	for j := 0; j < o.Accepted; j++ {
		if x := b.Tokens[j]; target[x] <= 0 {
			return fmt.Sprintf("edge: with %s the implementation accepted draft token %d at position %d, whose target probability is 0 "+check.InclusiveMark, what, x, j+1)
		}
	}
	if o.Next != sim.NoToken && target[o.Next] <= 0 {
		return fmt.Sprintf("edge: with %s the implementation emitted token %d, whose target probability is 0", what, o.Next)
	}
	return ""
}

// distinctOutcomes counts the different emitted sequences (accepted
// tokens and the extra token) of the rows of an edge-case batch.
func distinctOutcomes(bs []sim.Block, outs []sim.Outcome) int {
	seen := map[string]bool{}
	for i, o := range outs {
		seen[fmt.Sprint(bs[i].Tokens[:max(o.Accepted, 0)], o.Accepted, o.Next)] = true
	}
	return len(seen)
}

// keepsAll reports whether lw keeps all of b's drafts with probability 1
// (within rounding).
func keepsAll(lw sim.Lawer, b *sim.Block) bool {
	var law sim.Law
	if err := lw.Law(b, &law); err != nil {
		return false
	}
	return law.Accepted(b.Gamma()) >= 1-1e-9
}
