package seq

import (
	"fmt"
	"math"
	"strings"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// The verdict of a generation tests every emitted token through its
// randomised probability integral transform under the target's exact
// conditional law after the emitted prefix,
//
//	U_t = Σ_{w ≺ x_t} p_t(w) + u_t·p_t(x_t),  u_t ~ U(0, 1),
//
// in a fixed order ≺ of the tokens. Under losslessness U_1, U_2, ... are
// exactly i.i.d. uniform (Rosenblatt 1952; each U_t is uniform given the
// prefix, hence independent of it), so every cell of the tests below has
// probability exactly 1/cells and the χ² p-values are those of a
// multinomial, not the conservative approximation a test of counts under
// varying laws would give:
//
//   - pit, pit-index, pit-q: U_t in equal bins with tokens in decreasing
//     p_t order, in token-index order, and in decreasing order of the draft
//     model's row after the same prefix (a function of the prefix only, so
//     the transform stays exactly uniform; the most sensitive to rules
//     that lean towards the draft);
//   - pit-coarse, pit-index-coarse, pit-q-coarse: the same transforms in
//     8 bins (when the fine tests have more): a smooth shift of mass along
//     an order, such as a rule that over-weights the tokens both models
//     favour, is spread over the fine tests' 255 degrees of freedom and
//     detected far sooner on 7 (mlx-swift-lm's exact-match resampling at
//     16,000 tokens: p = 0.04 in 256 bins of the draft order, 6e-10 in 8);
//   - pairs: (U_{2k}, U_{2k+1}) of each prompt on a grid in token-index
//     order: dependence between successive tokens with exact marginals.
//
// A token emitted with target probability 0 is an invalid outcome.
const (
	// pitMaxBins bounds the bins of the per-token tests and pairMaxBins
	// the bins per axis of the pair test; both aim at minPerCell positions
	// per cell.
	pitMaxBins  = 256
	coarseBins  = 8 // the coarse per-token tests' bins
	pairMaxBins = 16
	minPerCell  = 20
	// maxTallyBins is the finest histogram kept; a test's B bins are
	// merged from it when the positions are counted (B divides it).
	maxTallyBins = 256
)

// The orders of the per-token tests.
const (
	orderP = iota
	orderIndex
	orderQ
	numOrders
)

var orderNames = [numOrders]string{"pit", "pit-index", "pit-q"}

var orderWords = [numOrders]string{"decreasing target probability", "token index", "decreasing draft probability"}

// Tally accumulates the transforms' histograms of a sequence of emitted
// tokens: a generation's (Generate) or a logged run's (experiments'
// replay), each token added with the target's and the draft model's rows
// after its prefix. Its zero value is not usable; use NewTally.
type Tally struct {
	v      int
	greedy bool
	n      int64
	zero   int64 // emitted tokens of target probability 0
	// pit[o] is the histogram of U in maxTallyBins bins for order o.
	pit [numOrders][]int64
	// pairs is the pair histogram on a pairMaxBins² grid, from which
	// coarser grids are merged; half holds the prompt's pending U.
	pairs   []int64
	half    float64
	hasHalf bool
	noPairs bool // StopPairs was called in this prompt
	onehot  []float64
}

// NewTally returns an empty tally over a vocabulary of v tokens; greedy
// tests the tokens against the one-hot law of the target's argmax.
func NewTally(v int, greedy bool) *Tally {
	t := &Tally{v: v, greedy: greedy, pairs: make([]int64, pairMaxBins*pairMaxBins)}
	for o := range t.pit {
		t.pit[o] = make([]int64, maxTallyBins)
	}
	if greedy {
		t.onehot = make([]float64, v)
	}
	return t
}

// StartPrompt ends the pairing of the previous prompt's positions.
//
// Pairs must be chosen before their tokens are drawn: a pair (U_t,
// U_{t+1}) kept only when token t+1 exists selects on U_t wherever that
// existence depends on token t (a step that stops at a rejection emits
// no token after its correction). A caller therefore starts a prompt, or
// stops pairing, only at positions fixed in advance: a generation's
// requested length, not the end of a step of variable length.
func (t *Tally) StartPrompt() { t.hasHalf, t.noPairs = false, false }

// StopPairs ends the pairing of the prompt's positions until the next
// StartPrompt: the tokens still added are tested one by one only.
func (t *Tally) StopPairs() { t.hasHalf, t.noPairs = false, true }

// Add records token x emitted with the target row p and the draft model's
// row q after the same prefix (q may be p where the draft has no row);
// u ~ U(0, 1) is the transform's randomisation, from a stream of its own.
// In greedy mode the target is the one-hot row of p's argmax. A token out
// of range or of target probability 0 is counted as an invalid outcome.
func (t *Tally) Add(u float64, p, q []float64, x int) {
	t.n++
	if x < 0 || x >= len(p) || x >= t.v {
		t.zero++
		return
	}
	if p[x] <= 0 {
		t.zero++
	}
	if t.greedy {
		sim.OneHot(t.onehot, t.v, sim.Argmax(p))
		p = t.onehot
	}
	px, qx := p[x], q[x]
	var before [numOrders]float64
	q = q[:len(p)]
	for w, e := range p[:t.v] {
		if e == 0 {
			continue
		}
		if e > px || e == px && w < x {
			before[orderP] += e
		}
		if w < x {
			before[orderIndex] += e
		}
		if qw := q[w]; qw > qx || qw == qx && w < x {
			before[orderQ] += e
		}
	}
	var us [numOrders]float64
	for o := range before {
		us[o] = min(before[o]+u*px, math.Nextafter(1, 0))
		t.pit[o][int(us[o]*maxTallyBins)]++
	}
	if t.noPairs {
		return
	}
	if t.hasHalf {
		t.pairs[int(t.half*pairMaxBins)*pairMaxBins+int(us[orderIndex]*pairMaxBins)]++
		t.hasHalf = false
	} else {
		t.half, t.hasHalf = us[orderIndex], true
	}
}

// Merge adds o's counts to t (workers' tallies of one generation).
func (t *Tally) Merge(o *Tally) {
	t.n += o.n
	t.zero += o.zero
	for k := range t.pit {
		for i, c := range o.pit[k] {
			t.pit[k][i] += c
		}
	}
	for i, c := range o.pairs {
		t.pairs[i] += c
	}
}

// Verdict is the sequence-level losslessness test.
type Verdict struct {
	// Verdict is check's: violated, inconclusive or not_detected (a
	// generation never shows the law preserved); Claim says in one
	// sentence what was shown.
	Verdict string  `json:"verdict"`
	Claim   string  `json:"claim"`
	PValue  float64 `json:"p_value"`
	Level   float64 `json:"level"`
	Power   float64 `json:"power"`
	// Positions is the number of emitted tokens tested, Invalid those of
	// target probability 0.
	Positions int64 `json:"positions"`
	Invalid   int64 `json:"invalid_outcomes"`
	// MinDetectableTV is the smallest minimum detectable TV of the tests,
	// each computed at its Holm share Level/m of the level with power
	// Power, and MinDetectableQuantity what it bounds.
	MinDetectableTV       float64      `json:"min_detectable_tv"`
	MinDetectableQuantity string       `json:"min_detectable_quantity"`
	Tests                 []check.Test `json:"tests"`
}

// bins returns the largest divisor of maxTallyBins at most max(2, n/minPerCell)
// and at most limit.
func bins(n int64, limit int) int {
	b := 2
	for b*2 <= limit && int64(b*2) <= max(2, n/minPerCell) {
		b *= 2
	}
	return b
}

// coarsen merges a histogram of len(h) bins into k (k divides len(h)).
func coarsen(h []int64, k int) []int64 {
	out := make([]int64, k)
	for i, c := range h {
		out[i*k/len(h)] += c
	}
	return out
}

// coarsenGrid merges an m×m grid into a k×k one (k divides m).
func coarsenGrid(h []int64, m, k int) []int64 {
	out := make([]int64, k*k)
	for i, c := range h {
		out[(i/m)*k/m*k+(i%m)*k/m] += c
	}
	return out
}

// Verdict runs the tests as one family through check.Assemble (each at
// its Holm share of the level, with its minimum detectable TV there, then
// Holm's correction) and words the verdict with check's words.
func (t *Tally) Verdict(level, power float64) Verdict {
	vd := Verdict{Level: level, Power: power, Positions: t.n, Invalid: t.zero, Verdict: check.NotDetected}
	var ps []check.Pending
	for _, pt := range t.pendingTests() {
		p, err := check.UniformTest(pt.name, pt.quantity, pt.obs)
		if err != nil { // counts of a tally are never negative
			return vd.failed(err)
		}
		ps = append(ps, p)
	}
	fam, err := check.Assemble(ps, level, power)
	if err != nil {
		return vd.failed(err)
	}
	vd.Tests, vd.PValue = fam.Tests, fam.PValue
	finest := fam.Tests[fam.Finest]
	vd.MinDetectableTV, vd.MinDetectableQuantity = finest.MinDetTV, finest.Quantity
	vd.Claim, vd.Verdict = t.claim(fam)
	return vd
}

// failed is the verdict of tests that could not run: inconclusive, saying
// why.
func (vd Verdict) failed(err error) Verdict {
	vd.Verdict, vd.PValue, vd.MinDetectableTV = check.Inconclusive, 1, math.Inf(1)
	vd.Claim = "inconclusive: the tests could not run: " + err.Error()
	return vd
}

// pendingTest is one of the tally's tests before it is run: its name,
// the quantity it measures, and its counts over equally likely cells.
type pendingTest struct {
	name, quantity string
	obs            []int64
}

// pendingTests lists the tally's tests: the probability integral
// transform in each order (in a few coarse bins as well when the fine
// bins are many), and the pairs of successive tokens on a grid.
func (t *Tally) pendingTests() []pendingTest {
	var ps []pendingTest
	b := bins(t.n, pitMaxBins)
	for o := range t.pit {
		ps = append(ps, pendingTest{orderNames[o],
			fmt.Sprintf("TV between the emitted and target law of each token given its prefix, in %d equal-mass bins of the tokens in %s order, averaged over the positions", b, orderWords[o]),
			coarsen(t.pit[o], b)})
	}
	if b > coarseBins {
		// The same transforms in a few bins: a smooth shift of mass along
		// an order (towards the draft's favourites, say) spreads over the
		// fine bins' many degrees of freedom and shows far more clearly
		// in a few.
		for o := range t.pit {
			ps = append(ps, pendingTest{orderNames[o] + "-coarse",
				fmt.Sprintf("TV between the emitted and target law of each token given its prefix, in %d equal-mass bins of the tokens in %s order, averaged over the positions", coarseBins, orderWords[o]),
				coarsen(t.pit[o], coarseBins)})
		}
	}
	var npairs int64
	for _, c := range t.pairs {
		npairs += c
	}
	pb := 2
	for pb*2 <= pairMaxBins && int64(pb*2*pb*2) <= max(4, npairs/minPerCell) {
		pb *= 2
	}
	return append(ps, pendingTest{"pairs",
		fmt.Sprintf("TV between the emitted and target joint law of successive tokens (positions 2k, 2k+1 of a prompt, given their prefixes) on a %d×%d grid of equal-mass bins in token-index order", pb, pb),
		coarsenGrid(t.pairs, pairMaxBins, pb)})
}

// claim words the verdict of the assembled tests fam and returns it with
// the verdict: violated on a rejection or an impossible token,
// inconclusive when a test was powerless, else the finest test's bound.
func (t *Tally) claim(fam check.Assembled) (string, string) {
	switch {
	case fam.Rejects() || t.zero > 0:
		var why []string
		if fam.Rejects() {
			best := fam.FirstRejecting()
			why = append(why, check.RejectWords(best.Name, best, fam.Level))
		}
		if t.zero > 0 {
			why = append(why, fmt.Sprintf("%d emitted tokens of target probability 0", t.zero))
		}
		return "violated: " + strings.Join(why, "; "), check.Violated
	case fam.Powerless:
		return fmt.Sprintf("inconclusive: no test detected a deviation, but some could not have detected even a total one (%d positions)", t.n), check.Inconclusive
	}
	return fam.Bound("the target law", fmt.Sprintf("over %d positions", t.n)), check.NotDetected
}
