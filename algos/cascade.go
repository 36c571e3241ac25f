package algos

import (
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Cascade is speculative cascades (Narasimhan, Jitkrittum, Rawat, Kim,
// Gupta, Menon, Kumar, "Faster Cascades via Speculative Decoding", arXiv
// 2405.19261, ICLR 2025): at each position a deferral rule
// r ∈ {0, 1} picks the relaxed target
//
//	π = (1 - r)·q + r·p,
//
// and exact speculative sampling is run against π: accept x w.p.
// min(1, π(x)/q(x)), residual norm((π - q)+). So r = 1 is token
// verification against p and r = 0 accepts the draft token outright
// (π = q). The rules (α the deferral cost):
//
//	Chow: defer iff max q ≤ 1 - α,                      α ∈ [0, 1], strict point α = 0;
//	Diff: defer iff max q ≤ max p - α,                  α ∈ [-1, 1], strict point α = -1;
//	OPT:  defer iff max q ≤ max p - α·TV(p, q),         α ∈ [-1, 1], strict point α = -1.
//
// The paper writes "<"; "≤" changes only exact ties and makes the strict
// point finite: max q ≤ 1, max q ≤ 1 ≤ max p + 1, and
// max q - max p ≤ q(x*) - p(x*) ≤ TV (x* = argmax q) hold for every pair,
// so at the strict point every position defers and the rule is token
// verification, bit for bit on the same uniforms (the strict value is also
// short-circuited, so rounding in max or TV of unnormalised float32 rows
// cannot break that). The other end of each range never defers (π = q).
//
// Randomness: as Token, one uniform per examined position (also on
// outright acceptance) and one for the emitted token.
type Cascade struct {
	Rule  CascadeRule
	Alpha float64
}

// CascadeRule names a deferral rule.
type CascadeRule int

// The deferral rules of Narasimhan et al.
const (
	Chow CascadeRule = iota
	Diff
	OPT
)

// Strict returns the strict point of the rule's α range.
func (c CascadeRule) Strict() float64 {
	if c == Chow {
		return 0
	}
	return -1
}

// Defer reports whether the rule defers to the target at (p, q).
func (c Cascade) Defer(p, q sim.Row) bool {
	if c.Alpha == c.Rule.Strict() {
		return true
	}
	switch c.Rule {
	case Chow:
		return rowMax(q) <= 1-c.Alpha
	case Diff:
		return rowMax(q) <= rowMax(p)-c.Alpha
	}
	return rowMax(q) <= rowMax(p)-c.Alpha*rowTV(p, q)
}

func (c Cascade) decide(p, q sim.Row) decision {
	if c.Defer(p, q) {
		return decision{mode: modeRatio, k: 1, corr: residualCorrection(1)}
	}
	return decision{mode: modeAll, corr: residualCorrection(1)}
}

// Accept runs one step.
func (c Cascade) Accept(rng *rand.Rand, b *sim.Block) sim.Outcome { return chainAccept(c, rng, b) }

// Law writes the exact outcome law given b.
func (c Cascade) Law(b *sim.Block, dst *sim.Law) error { return chainLaw(c, b, dst) }

func init() {
	signed := []float64{-1, -0.5, -0.2, 0, 0.2, 0.5, 1}
	for _, r := range []struct {
		name, rule, doc string
		kind            CascadeRule
		grid            []float64
	}{
		{"cascade-chow", "Chow: defer iff max q <= 1 - alpha", "deferral cost alpha in [0, 1]; 0 always defers (token verification), 1 never", Chow,
			[]float64{0, 0.1, 0.3, 0.5, 0.7, 0.9, 1}},
		{"cascade-diff", "Diff: defer iff max q <= max p - alpha", "deferral cost alpha in [-1, 1]; -1 always defers (token verification), 1 never", Diff, signed},
		{"cascade-opt", "OPT: defer iff max q <= max p - alpha·TV(p,q)", "deferral cost alpha in [-1, 1]; -1 always defers (token verification)", OPT, signed},
	} {
		lo := r.kind.Strict()
		Register(Entry{Info: Info{Name: r.name, AllocFree: true, Lossy: true,
			Summary:  "speculative cascade, " + r.rule + "; exact speculative sampling against π = (1-r)q + rp",
			Paper:    "Narasimhan et al. 2025, 'Faster Cascades via Speculative Decoding', arXiv 2405.19261",
			Params:   []Param{{Name: "alpha", Default: math.Max(lo, 0) + 0.1, Min: lo, Max: 1, Doc: r.doc}},
			Strict:   Params{"alpha": lo},
			Frontier: &Sweep{Param: "alpha", Values: r.grid}},
			New: func(ps Params) (sim.Algorithm, error) { return Cascade{Rule: r.kind, Alpha: ps["alpha"]}, nil }})
	}
}
