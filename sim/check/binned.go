package check

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
)

// LosslessCheck is a Pearson chi-squared test of the first emitted token
// of each step against the target row p_1 of that step, with tokens
// binned by their ratio cell: r(t) = q_1(t)/p_1(t) falls in one of
// RatioEdges' intervals, or in the cell "p_1(t) = 0". Under a lossless
// rule, the first emitted token of step s is in cell c with probability
// Σ_{t∈c} p_1^s(t), so the observed counts are a sum of independent
// categorical draws with known probabilities. The test compares them with
// the mean cell probabilities; with probabilities that vary from step to
// step the counts are less dispersed than a multinomial's, so the test is
// conservative (its false-alarm rate is at most the level). A bug that
// moves mass between tokens where the draft over- and under-weights the
// target (p/q processing mismatches, residual errors) shows up here.
//
// For greedy rules the cells are "argmax p_1" and "any other token", with
// probabilities 1 and 0.
type LosslessCheck struct {
	Cells    []string  `json:"cells"`
	Observed []int64   `json:"observed"`
	Expected []float64 `json:"expected"`
	Stat     float64   `json:"chi2"`
	DF       int       `json:"df"`
	PValue   float64   `json:"p_value"`
	// Verdict is NotDetected (p ≥ level), Violated (p < level) or
	// Inconclusive (no step, or cells the test cannot use); Claim says
	// in one sentence what was shown.
	Verdict string `json:"verdict"`
	Claim   string `json:"claim"`
	// Level is the test's level, Power the power at which MinDetectableTV
	// (null when there is no data) is stated: the TV between the law of
	// the first emitted token's cell and the target's, pooled over the
	// steps, that the test detects with probability Power. The cells'
	// probabilities vary by step, so the counts are sums of unequal
	// Bernoulli trials with less variance than the multinomial the χ² and
	// its power assume: the level is conservative and the power
	// approximate.
	Level           float64  `json:"level"`
	Power           float64  `json:"power"`
	MinDetectableTV *float64 `json:"min_detectable_tv"`
}

// firstTokenQuantity is what the binned test's minimum detectable TV bounds.
const firstTokenQuantity = "TV between the emitted and target law of the first emitted token's cell, pooled over the steps"

// RatioEdges are the upper edges of the ratio cells of LosslessCheck
// (the last cell is (4, +Inf)).
var RatioEdges = []float64{0.25, 0.5, 0.8, 1, 1.25, 2, 4}

// Binned accumulates the binned losslessness test over steps: for each
// step the cells' probabilities under the target and the cell of the
// first emitted token. Its memory does not grow with the steps.
type Binned struct {
	names  []string
	obs    []int64
	exp    []float64
	greedy bool // NewGreedyBinned's test
}

// NewRatioBinned returns the test over the ratio cells (RatioCellNames).
func NewRatioBinned() *Binned { return newBinned(RatioCellNames()) }

// NewGreedyBinned returns the test of a greedy rule: cells "argmax p_1"
// (probability 1) and "other" (probability 0).
func NewGreedyBinned() *Binned {
	c := newBinned([]string{"argmax p_1", "other"})
	c.greedy = true
	return c
}

func newBinned(names []string) *Binned {
	return &Binned{names: names, obs: make([]int64, len(names)), exp: make([]float64, len(names))}
}

// GreedyProbs are the cell probabilities of NewGreedyBinned's cells.
var GreedyProbs = []float64{1, 0}

// Add records one step: probs are the cells' target probabilities for this
// step (RatioCells, or GreedyProbs) and cell the cell of the first emitted
// token (-1: the step emitted nothing; only the expectation grows).
func (c *Binned) Add(probs []float64, cell int) {
	for i, p := range probs {
		c.exp[i] += p
	}
	if cell >= 0 {
		c.obs[cell]++
	}
}

// Test runs the chi-squared test at the given level, a family of one
// assembled by Assemble (its minimum detectable TV at the whole level)
// and worded with check's words.
func (c *Binned) Test(level float64) LosslessCheck {
	lc := LosslessCheck{Cells: c.names, Observed: c.obs, Expected: c.exp, Verdict: Inconclusive, Level: level, Power: DefaultPower,
		Claim: "inconclusive: no step was tested"}
	n := 0.0
	for _, e := range c.exp {
		n += e
	}
	if n == 0 {
		return lc
	}
	probs := make([]float64, len(c.exp))
	for i, e := range c.exp {
		probs[i] = e / n
	}
	fam, err := c.assemble(probs, level)
	if err != nil {
		lc.Claim = "inconclusive: " + err.Error()
		return lc
	}
	t := fam.Tests[0]
	lc.Stat, lc.DF, lc.PValue = t.Stat, t.DF, t.PValue
	if fam.Rejects() {
		lc.Verdict = Violated
		lc.Claim = fmt.Sprintf("violated: %s, %d steps", RejectWords(t.Name, t, level), t.N)
		return lc
	}
	if c.greedy && t.N > 0 {
		// Every step emitted the argmax: a deviation putting probability ε
		// off the argmax goes unseen in N steps with probability (1-ε)^N.
		eps := -math.Expm1(math.Log1p(-DefaultPower) / float64(t.N))
		lc.MinDetectableTV = &eps
		lc.Verdict = NotDetected
		lc.Claim = fmt.Sprintf("no deviation detected: all %d steps emitted the target's argmax first; a rule emitting another token with probability %.3g would have been detected with probability %g",
			t.N, eps, DefaultPower)
		return lc
	}
	if t.DF < 1 || t.N < 1 {
		lc.Claim = fmt.Sprintf("inconclusive: the cells leave no degree of freedom to test (%d steps)", t.N)
		return lc
	}
	tv := t.MinDetTV
	lc.MinDetectableTV = &tv
	lc.Verdict = NotDetected
	lc.Claim = fam.Bound("the target law in the first emitted tokens' cells", fmt.Sprintf("over %d steps", t.N))
	return lc
}

// firstTokenTest names the binned test of the first emitted tokens.
const firstTokenTest = "first-token-cells"

// assemble runs the test of the counts against probs as a family of one.
func (c *Binned) assemble(probs []float64, level float64) (Assembled, error) {
	tb := &stattest.Table{}
	if err := tb.Add(c.obs, probs); err != nil {
		return Assembled{}, err
	}
	return Assemble([]Pending{{name: firstTokenTest, quantity: firstTokenQuantity, table: tb}}, level, DefaultPower)
}

// RatioCellNames names the ratio cells: "p=0", then one per RatioEdges
// interval of q/p.
func RatioCellNames() []string {
	names := []string{"p=0"}
	lo := "0"
	for _, e := range RatioEdges {
		names = append(names, fmt.Sprintf("q/p in (%s,%g]", lo, e))
		lo = fmt.Sprint(e)
	}
	return append(names, fmt.Sprintf("q/p in (%s,inf)", lo))
}

// RatioCell returns the cell of token t: 0 if p(t) = 0, else 1 + the
// index of the first edge e with q(t) ≤ e·p(t).
func RatioCell(p, q sim.Row, t int) int {
	pt, qt := p.At(t), q.At(t)
	if pt == 0 {
		return 0
	}
	for k, e := range RatioEdges {
		if qt <= e*pt {
			return 1 + k
		}
	}
	return 1 + len(RatioEdges)
}

// RatioCells writes into dst (length len(RatioEdges)+2) the normalised
// p-mass of every ratio cell.
func RatioCells(dst []float64, p, q sim.Row) {
	clear(dst)
	for t := 0; t < p.Len(); t++ {
		pt := p.At(t)
		if pt == 0 {
			continue
		}
		dst[RatioCell(p, q, t)] += pt
	}
	s := 0.0
	for _, v := range dst {
		s += v
	}
	for i := range dst {
		dst[i] /= s
	}
}
