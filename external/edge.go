package external

import (
	"errors"
	"fmt"
	"math"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
)

// Edge runs check.EdgeCheck's two scripted-coin cases through the
// protocol, each as a one-row batch with inline rows (V and γ of the
// run; tokens ≥ 3 have probability 0) whose generator's random() and
// uniform() draws are exactly 0, then 1 - 2^-53:
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
// the run's sampling; the target law is then the transformed p. It
// returns a description of the first violation, or nil, and the note; a
// protocol failure is returned as the error.
func (im *Impl) Edge(s *data.Sampling, conform sim.Lawer) (violation error, note string, err error) {
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
	for _, c := range cases {
		b := sim.Block{Tokens: make([]int, g), Q: make([]sim.Row, g), P: make([]sim.Row, g+1), Ctx: -1}
		for j := range b.Tokens {
			b.Tokens[j] = c.draft
			b.Q[j] = sim.F32(c.q)
		}
		for j := range b.P {
			b.P[j] = sim.F32(c.p)
		}
		target := c.p
		if s != nil {
			var tr data.Transformer
			logits := make([]float32, v)
			for x, p := range c.p {
				logits[x] = float32(math.Log(float64(p)))
			}
			target = make([]float32, v)
			if err := tr.Apply(*s, target, logits); err != nil {
				return nil, "", err
			}
		}
		outs := make([]sim.Outcome, 1)
		bs := []sim.Block{b}
		if err := im.steps(batchOpts{coins: c.coins}, bs, outs); err != nil {
			return nil, "", err
		}
		o := outs[0]
		what := map[string]string{coinsZero: "every coin exactly 0", coinsMax: "every coin 1-2^-53"}[c.coins]
		if o.Accepted < 0 {
			return fmt.Errorf("edge: with %s the implementation gave an invalid outcome (see the outcomes component)", what), note, nil
		}
		for j := 0; j < o.Accepted; j++ {
			if x := bs[0].Tokens[j]; target[x] <= 0 {
				return fmt.Errorf("edge: with %s the implementation accepted draft token %d at position %d, whose target probability is 0 (an inclusive comparison r <= p/q?)", what, x, j+1), note, nil
			}
		}
		if o.Next != sim.NoToken && target[o.Next] <= 0 {
			return fmt.Errorf("edge: with %s the implementation emitted token %d, whose target probability is 0", what, o.Next), note, nil
		}
		if c.accept && o.Accepted != g {
			msg := fmt.Sprintf("edge: with p = q and %s the implementation rejected draft %d at position %d (Leviathan's rule keeps it: p/q = 1 > r)", what, bs[0].Tokens[o.Accepted], o.Accepted+1)
			if conform != nil && keepsAll(conform, &b) {
				return errors.New(msg + "; the rule it is tested against keeps every draft here"), note, nil
			}
			note = msg + "; a lossless rule need not (a point-mass verifier accepts with probability p), so this is not part of the verdict"
		}
	}
	return nil, note, nil
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
