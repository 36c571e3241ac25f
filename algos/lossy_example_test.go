package algos_test

import (
	"fmt"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
)

// lossyBlock is a one-position block: target p, draft q, draft token 0,
// uniform bonus row.
func lossyBlock() *sim.Block {
	return &sim.Block{Tokens: []int{0},
		Q: []sim.Row{sim.F64([]float64{0.6, 0.3, 0.1})},
		P: []sim.Row{sim.F64([]float64{0.3, 0.3, 0.4}), sim.F64([]float64{1.0 / 3, 1.0 / 3, 1.0 / 3})}}
}

var exP, exQ = []float64{0.3, 0.3, 0.4}, []float64{0.6, 0.3, 0.1}

func ExampleLenience() {
	// α_l = Σ min(p/l, q) = 0.375 + 0.3 + 0.1 at l = 0.8; reading (a)
	// spreads 1 - α_l over (p - l·q)+ = (0, 0.06, 0.32), reading (b) over
	// (p - q)+ = (0, 0, 0.3). Both keep π ≤ p/l = 1.25·p.
	for _, r := range []algos.Lenience{{L: 0.8}, {L: 0.8, ResidualP: true}} {
		m, pi, _ := algos.PositionMetrics(r, exP, exQ)
		fmt.Printf("residual-p %v: acceptance %.4f π %.4f max π/p %.4f\n", r.ResidualP, m.Acceptance, pi, m.MaxRatio)
	}
	o := algos.Lenience{L: 0.8}.Accept(sim.NewRand(1, 2), lossyBlock())
	fmt.Printf("one step: accepted %d, next %d\n", o.Accepted, o.Next)
	// Output:
	// residual-p false: acceptance 0.7750 π [0.3750 0.3355 0.2895] max π/p 1.2500
	// residual-p true: acceptance 0.7750 π [0.3750 0.3000 0.3250] max π/p 1.2500
	// one step: accepted 0, next 2
}

// ρ = p/q = (0.5, 1, 4): token 0 is below a, token 2 above b, so
// m = 0.6 - 0.3/a, b = 0.4/(m + 0.1), KL = 0.3 log a + 0.4 log b = D.
func ExampleMentored() {
	s, _ := algos.SolveMentored(exP, exQ, 0.05)
	pi, _ := s.Pi(exP, exQ)
	fmt.Printf("a %.6f b %.6f acceptance %.6f KL %.6f (D 0.05)\n", s.A, s.B, s.Acceptance, s.KL)
	fmt.Printf("π %.6f\n", pi)
	o := algos.Mentored{D: 0.05}.Accept(sim.NewRand(1, 2), lossyBlock())
	fmt.Printf("one step: accepted %d, next %d\n", o.Accepted, o.Next)
	// Output:
	// a 0.696063 b 1.486964 acceptance 0.830995 KL 0.050000 (D 0.05)
	// π [0.430995 0.300000 0.269005]
	// one step: accepted 1, next 1
}

// H(p) = 1.0889 nats, so the threshold is min(0.09, 0.3·e^-H = 0.101) =
// 0.09: every token passes and π = q.
func ExampleTypical() {
	m, pi, _ := algos.PositionMetrics(algos.Typical{Eps: 0.09, Delta: 0.3}, exP, exQ)
	fmt.Printf("acceptance %.4f π %.4f TV %.4f\n", m.Acceptance, pi, m.TV)
	// Output:
	// acceptance 1.0000 π [0.6000 0.3000 0.1000] TV 0.3000
}

// max q = 0.6, max p = 0.4, TV = 0.3: Chow defers iff 0.6 ≤ 1 - α, OPT
// iff 0.6 ≤ 0.4 - 0.3α. Deferring is token verification (acceptance
// Σ min(p, q) = 0.7); not deferring accepts q (KL(p‖q) = 0.3466).
func ExampleCascade() {
	for _, c := range []algos.Cascade{{Rule: algos.Chow, Alpha: 0}, {Rule: algos.Chow, Alpha: 0.5}, {Rule: algos.OPT, Alpha: -0.8}, {Rule: algos.OPT, Alpha: 0.2}} {
		m, _, _ := algos.PositionMetrics(c, exP, exQ)
		fmt.Printf("rule %d alpha %.1f: acceptance %.4f KL %.4f\n", c.Rule, c.Alpha, m.Acceptance, m.KL)
	}
	// Output:
	// rule 0 alpha 0.0: acceptance 0.7000 KL 0.0000
	// rule 0 alpha 0.5: acceptance 1.0000 KL 0.3466
	// rule 2 alpha -0.8: acceptance 0.7000 KL 0.0000
	// rule 2 alpha 0.2: acceptance 1.0000 KL 0.3466
}

func ExampleFuzzy() {
	for _, f := range []algos.Fuzzy{{T: 0}, {T: 0.1}} {
		m, _, _ := algos.PositionMetrics(f, exP, exQ)
		fmt.Printf("T %.1f: JSD %.4f acceptance %.4f KL %.4f\n", f.T, sim.JS(exP, exQ), m.Acceptance, m.KL)
	}
	// Output:
	// T 0.0: JSD 0.0737 acceptance 0.7000 KL 0.0000
	// T 0.1: JSD 0.0737 acceptance 1.0000 KL 0.3466
}

func ExampleSearchAcceptance() {
	p, q := []float64{0.5, 0.3, 0.2}, []float64{0.2, 0.3, 0.5}
	m, _ := algos.SolveMentored(p, q, 0.02)
	s, _ := algos.SearchAcceptance(sim.NewRand(1, 3), p, q, 0.02, 2)
	fmt.Printf("mentored %.5f, best found %.5f\n", m.Acceptance, s.Acceptance)
	// Output:
	// mentored 0.78025, best found 0.78025
}
