package algos

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/specsim/specsim/sim"
)

// MentoredCurve is mentored decoding's acceptance–KL curve of one pair
// (p, q): R(D), the most acceptance any rule gets at one position with
// KL(p‖π) ≤ D (Mentored). R is increasing and concave in D (KL(m) is
// convex and decreasing in the rejection mass m = 1 - R), from
// Σ min(p, q) at D = 0 to 1 at D = KL(p‖q), and its slope at the solution
// with thresholds a ≤ 1 ≤ b is
//
//	dR/dD = -dm/dKL = 1/(b - a).
//
// The curve is what a budget allocation across contexts needs
// (MentoredFrontier): it answers "where is the slope λ" as well as "what
// is R at D".
type MentoredCurve struct {
	sc     *mscratch
	outKL  float64 // KL(p‖q): D at and beyond which R = 1
	maxGap float64 // b - a at the smallest rejection mass mFloor
	// tailP[j] and tailQ[j] are Σ_{i ≥ j} p_i and q_i over the tokens in
	// ratio order, summed from the last (the smallest masses first).
	tailP, tailQ []float64
}

// NewMentoredCurve prepares the curve of target p and draft q.
func NewMentoredCurve(p, q []float64) (*MentoredCurve, error) {
	if err := sim.ValidatePair(p, q); err != nil {
		return nil, err
	}
	sc := new(mscratch)
	sc.load(sim.F64(p), sim.F64(q))
	c := &MentoredCurve{sc: sc, outKL: rowKL(sim.F64(p), sim.F64(q))}
	n := len(sc.it)
	c.tailP, c.tailQ = make([]float64, n+1), make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		c.tailP[i] = c.tailP[i+1] + sc.it[i].p
		c.tailQ[i] = c.tailQ[i+1] + sc.it[i].q
	}
	if sc.mMax > curveFloor {
		c.maxGap = c.gap(curveFloor)
	}
	return c, nil
}

// curveFloor is the least rejection mass the curve is evaluated at: below
// about 1e-14 the prefix sums' rounding (1e-16 of Σp ≈ 1) decides which
// tokens lie beyond the thresholds, and the gap b - a is no longer
// monotone. Between it and 0 the KL changes by about m·log(1/m) ≈ 3e-11
// nats at most per unit of probability, far below every tolerance that
// reads the curve; the steepest budgets beyond it map to the outright
// point (or, where KL(p‖q) is infinite, to the point at curveFloor).
const curveFloor = 1e-12

// at evaluates the curve at rejection mass m and returns the solution and
// its threshold gap b - a (limits). gap is the gap alone, for the
// searches: no KL (two logarithms) and no solution to fill.
func (c *MentoredCurve) at(m float64) (MentoredSolution, float64) {
	k, j := c.sc.sets(m)
	sol := c.sc.fixed(m, k, j)
	a, b := c.limits(m, k, j, sol.A, sol.B)
	return sol, b - a
}

func (c *MentoredCurve) gap(m float64) float64 {
	k, j := c.sc.sets(m)
	a, b := c.sc.ab(m, k, j)
	a, b = c.limits(m, k, j, a, b)
	return b - a
}

// limits returns the thresholds (a, b) of the solution at m with sets
// (k, j) where its searches came back empty: at a rejection mass near
// rounding they can (g(ρ_max) = p/ρ_max - q and h(ρ_min) = q - p/ρ_min
// are 0 only up to rounding), and the solution then reports b = 1 or
// a = 0; the thresholds are then at their limits as m → 0 (or m → Q_0,
// where the draft's p = 0 tokens start being accepted): the largest ratio
// ρ for b, the least positive one for a. The KL and the acceptance do not
// depend on that (the sets' mass is zero).
func (c *MentoredCurve) limits(m float64, k, j int, a, b float64) (float64, float64) {
	sc := c.sc
	n := len(sc.it)
	switch {
	case j >= n && n > 0:
		b = math.Max(b, sc.it[n-1].r)
	case b == 1 && j < n:
		// the prefix sums lost the tail's mass (tokens of tiny p far above
		// ρ = 1 vanish in Σp ≈ 1): the tail summed directly, from the
		// smallest (tailP, tailQ)
		if qh := c.tailQ[j]; m+qh > 0 {
			b = math.Max(1, c.tailP[j]/(m+qh))
		} else {
			b = sc.it[n-1].r
		}
	}
	if k <= sc.z && m > sc.q0 && sc.z < n {
		a = sc.it[sc.z].r
	}
	return a, b
}

// AtGap returns the solution on the curve whose thresholds are s = b - a
// apart, that is whose slope dR/dD is 1/s (s ≥ 0): token verification
// (D = 0) at s = 0; where no solution is that steep (s beyond b - a at the
// least rejection mass), the draft accepted outright at D = KL(p‖q).
func (c *MentoredCurve) AtGap(s float64) MentoredSolution { return c.atGap(s, nil) }

// atGap is AtGap, reading the gaps its bisection visits from path where
// the last search on path visited the same points (path nil: none kept).
// The bisection's points depend only on the decisions before them, so a
// search for a nearby s walks the same points until the first decision
// that differs: the outer search on a frontier (At) asks for gaps ever
// closer together, and its answer is bit for bit the one without path.
func (c *MentoredCurve) atGap(s float64, path *[]gapNode) MentoredSolution {
	sc := c.sc
	switch {
	case !(s > 0):
		return sc.eval(sc.mMax)
	case s >= c.maxGap:
		if math.IsInf(c.outKL, 1) {
			sol, _ := c.at(curveFloor)
			return sol
		}
		return MentoredSolution{B: math.Inf(1), Coin: 1, Acceptance: 1, KL: c.outKL, Outright: true, Converged: true}
	}
	// b - a decreases in m from maxGap at curveFloor to 0 at mMax: bisect
	// on log m
	lo, hi := math.Log(curveFloor), math.Log(sc.mMax)
	for d := range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if c.gapOn(path, d, mid) > s {
			lo = mid
		} else {
			hi = mid
		}
	}
	sol, _ := c.at(math.Exp(hi))
	return sol
}

// gapNode is a point a gap search visited: log m and the gap there.
type gapNode struct{ x, g float64 }

// gapOn returns the gap at m = exp(x), the search's d-th point: from path
// when its d-th point is x, else computed, and path cut there and
// extended with it.
func (c *MentoredCurve) gapOn(path *[]gapNode, d int, x float64) float64 {
	if path == nil {
		return c.gap(math.Exp(x))
	}
	if p := *path; d < len(p) && p[d].x == x {
		return p[d].g
	}
	g := c.gap(math.Exp(x))
	*path = append((*path)[:min(d, len(*path))], gapNode{x, g})
	return g
}

// MentoredFrontier is the most acceptance a rule can average over
// contexts for an average KL budget: contexts k with weights w_k (summing
// to 1) and pairs (p_k, q_k), and
//
//	F(B) = max Σ_k w_k R_k(D_k)  s.t.  Σ_k w_k D_k ≤ B,
//
// with R_k context k's MentoredCurve. Each R_k is concave, so the optimum
// gives every context the budget where its slope equals one common λ
// (water-filling on the slopes; contexts whose curve is never that steep
// get D_k = 0, those flatter everywhere accept outright), and λ is chosen
// so the budgets average B. Any rule whose per-context KL(p_k‖π_k)
// averages B accepts at most R_k(KL_k) in context k (mentored decoding is
// optimal per context), so at most F(B) on average: F is the lossy
// frontier for an average budget. Mentored decoding with the same D in
// every context lies on or below it.
type MentoredFrontier struct {
	w      []float64
	curves []*MentoredCurve
	maxGap float64
	// mu guards the points the last searches visited: each curve's gap
	// search (paths) and the search on the common gap (outer), which At
	// calls for nearby budgets walk again.
	mu    sync.Mutex
	paths [][]gapNode
	outer []frontierNode
}

// frontierNode is a point the search on the common gap visited.
type frontierNode struct {
	s  float64
	pt FrontierPoint
}

// NewMentoredFrontier prepares the frontier of the pairs (ps[k], qs[k])
// with weights w (nil: equal weights); w is normalised to sum 1.
func NewMentoredFrontier(ps, qs [][]float64, w []float64) (*MentoredFrontier, error) {
	if len(ps) == 0 || len(ps) != len(qs) || (w != nil && len(w) != len(ps)) {
		return nil, fmt.Errorf("mentored frontier: %d targets, %d drafts and %d weights; give one of each per context", len(ps), len(qs), len(w))
	}
	f := &MentoredFrontier{w: make([]float64, len(ps)), paths: make([][]gapNode, len(ps))}
	sum := 0.0
	for k := range ps {
		f.w[k] = 1
		if w != nil {
			f.w[k] = w[k]
		}
		if !(f.w[k] >= 0) || math.IsInf(f.w[k], 0) {
			return nil, fmt.Errorf("mentored frontier: weight %d = %g; use finite weights >= 0", k, f.w[k])
		}
		sum += f.w[k]
		c, err := NewMentoredCurve(ps[k], qs[k])
		if err != nil {
			return nil, fmt.Errorf("mentored frontier: context %d: %w", k, err)
		}
		f.curves = append(f.curves, c)
		f.maxGap = math.Max(f.maxGap, c.maxGap)
	}
	if !(sum > 0) {
		return nil, fmt.Errorf("mentored frontier: the weights sum to %g; give a positive weight", sum)
	}
	for k := range f.w {
		f.w[k] /= sum
	}
	return f, nil
}

// FrontierPoint is the frontier at one common slope: the average budget,
// the average acceptance and each context's budget.
type FrontierPoint struct {
	// KL and Acceptance are the weighted averages Σ w_k D_k and
	// Σ w_k R_k(D_k); Gap is the common b - a (1/slope).
	KL, Acceptance, Gap float64
	// D holds each context's budget D_k.
	D []float64
}

// AtGap returns the frontier's point where every context's threshold gap
// b - a is s (slope 1/s).
func (f *MentoredFrontier) AtGap(s float64) FrontierPoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	pt := f.atGap(s)
	pt.D = slices.Clone(pt.D)
	return pt
}

func (f *MentoredFrontier) atGap(s float64) FrontierPoint {
	pt := FrontierPoint{Gap: s, D: make([]float64, len(f.curves))}
	for k, c := range f.curves {
		sol := c.atGap(s, &f.paths[k])
		pt.D[k] = sol.KL
		pt.KL += f.w[k] * sol.KL
		pt.Acceptance += f.w[k] * sol.Acceptance
	}
	return pt
}

// At returns the frontier at average budget b ≥ 0: the point whose
// average KL is b (to rounding), or the all-outright point when b is at
// least its average KL.
func (f *MentoredFrontier) At(b float64) (FrontierPoint, error) {
	if !(b >= 0) {
		return FrontierPoint{}, fmt.Errorf("mentored frontier: budget %g; use a budget >= 0", b)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	top := f.atGap(f.maxGap)
	if b >= top.KL {
		return top, nil
	}
	// the average KL increases with the gap: bisect the gap on (0, maxGap)
	lo, hi := 0.0, f.maxGap
	best := f.atGap(0)
	for d := range 200 {
		mid := lo + (hi-lo)/2
		if mid == lo || mid == hi {
			break
		}
		pt := f.outerAt(d, mid)
		if pt.KL <= b {
			lo, best = mid, pt
		} else {
			hi = mid
		}
	}
	best.D = slices.Clone(best.D)
	return best, nil
}

// outerAt is atGap(s) for the d-th point of At's search, from the points
// the last search visited when its d-th point was s (gapOn's walk, one
// level up: budgets asked in turn share their searches' first points).
func (f *MentoredFrontier) outerAt(d int, s float64) FrontierPoint {
	if d < len(f.outer) && f.outer[d].s == s {
		return f.outer[d].pt
	}
	pt := f.atGap(s)
	f.outer = append(f.outer[:min(d, len(f.outer))], frontierNode{s, pt})
	return pt
}
