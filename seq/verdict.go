package seq

import (
	"math"
	"sort"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/stattest"
)

const (
	// groups is the number of context keys of the token test: the previous
	// token modulo groups.
	groups = 4
	// buckets is the number of log2 cells of the bucket test; the last
	// holds every probability below 2^-(buckets-1).
	buckets = 40
	// fixScale is the fixed-point scale of expected counts: integer sums
	// are associative, so verdicts do not depend on how positions are
	// split between workers.
	fixScale = 1 << 40
	// pitBins is the number of equal bins of the pit test.
	pitBins = 20
)

// tally accumulates observed and expected counts of the two tests.
type tally struct {
	v          int
	obs, exp   []int64 // groups × V
	bobs, bexp []int64 // buckets
	zero       int64   // emitted tokens of target probability 0
	pit, pitq  []int64 // pitBins
	n          int64
	greedy     bool
}

func newTally(v int, greedy bool) *tally {
	return &tally{v: v, obs: make([]int64, groups*v), exp: make([]int64, groups*v),
		bobs: make([]int64, buckets), bexp: make([]int64, buckets), pit: make([]int64, pitBins), pitq: make([]int64, pitBins), greedy: greedy}
}

func bucket(p float64) int {
	e := int(math.Float64bits(p)>>52&0x7ff) - 1023 // floor(log2 p) for normal p
	return min(max(-e, 0), buckets-1)
}

// add records token x emitted after a context whose last token is prev
// (-1 for none) with the target row p.
//
// u is a uniform for the randomised probability integral transform: with
// tokens ordered by decreasing p (ties by index), F(x-) the mass before x,
// U = F(x-) + u·p(x) is exactly Uniform(0, 1) given the prefix under
// losslessness, so the U of successive positions are i.i.d. uniform (a
// martingale argument) and the pit test's χ² over pitBins equal bins is
// exact rather than conservative. The pit-q test is the same transform
// with tokens ordered by the draft model's row q after the same prefix (a
// function of the prefix only, so the transform stays exactly uniform):
// it is the most sensitive to rules that lean towards the draft.
func (t *tally) add(u float64, prev int, p, q []float64, x int) {
	g := 0
	if prev >= 0 {
		g = prev % groups
	}
	t.n++
	obs, exp := t.obs[g*t.v:(g+1)*t.v], t.exp[g*t.v:(g+1)*t.v]
	obs[x]++
	if t.greedy {
		exp[sim.Argmax(p)] += fixScale
		return
	}
	px, qx := p[x], q[x]
	before, beforeQ := 0.0, 0.0
	q = q[:len(p)]
	for w, e := range p[:t.v] {
		if e > 0 {
			exp[w] += int64(e*fixScale + 0.5)
			t.bexp[bucket(e)] += int64(e*fixScale + 0.5)
			if e > px || e == px && w < x {
				before += e
			}
			if qw := q[w]; qw > qx || qw == qx && w < x {
				beforeQ += e
			}
		}
	}
	t.pit[min(int((before+u*px)*pitBins), pitBins-1)]++
	t.pitq[min(int((beforeQ+u*px)*pitBins), pitBins-1)]++
	if p[x] > 0 {
		t.bobs[bucket(p[x])]++
	} else {
		t.zero++
	}
}

func (t *tally) merge(o *tally) {
	for i := range t.obs {
		t.obs[i] += o.obs[i]
		t.exp[i] += o.exp[i]
	}
	for i := range t.bobs {
		t.bobs[i] += o.bobs[i]
		t.bexp[i] += o.bexp[i]
	}
	t.zero += o.zero
	for i := range t.pit {
		t.pit[i] += o.pit[i]
		t.pitq[i] += o.pitq[i]
	}
	t.n += o.n
}

// Verdict is the sequence-level losslessness test.
type Verdict struct {
	Verdict string  `json:"verdict"`
	PValue  float64 `json:"p_value"`
	Level   float64 `json:"level"`
	Power   float64 `json:"power"`
	// Positions is the number of emitted tokens tested.
	Positions int64 `json:"positions"`
	// MinDetectableTV is the TV between the emitted and the target law,
	// averaged over the cells of the token test, that the token test
	// detects with probability Power at level Level (the multinomial
	// approximation of stattest.MinDetectableTV).
	MinDetectableTV float64      `json:"min_detectable_tv"`
	Tests           []check.Test `json:"tests"`
}

// verdict runs the tests, Holm-adjusted at the family-wise level.
func (t *tally) verdict(level, power float64) Verdict {
	vd := Verdict{Level: level, Power: power, Positions: t.n}
	var tabs []*stattest.Table
	var names []string
	var tvs []float64
	// token test: per group, cells sorted by expected count, largest first,
	// so pooling merges the rare tail.
	tok := &stattest.Table{}
	idx := make([]int, t.v)
	for g := range groups {
		obs, exp := t.obs[g*t.v:(g+1)*t.v], t.exp[g*t.v:(g+1)*t.v]
		var n int64
		for _, o := range obs {
			n += o
		}
		if n == 0 {
			continue
		}
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return exp[idx[a]] > exp[idx[b]] })
		o, p := make([]int64, 0, t.v), make([]float64, 0, t.v)
		tot := 0.0
		for _, w := range idx {
			tot += float64(exp[w])
		}
		for _, w := range idx {
			o = append(o, obs[w])
			p = append(p, float64(exp[w])/tot)
		}
		fixSum(p)
		_ = tok.Add(o, p)
	}
	tabs, names = append(tabs, tok), append(names, "token")
	if !t.greedy {
		b := &stattest.Table{}
		o := append([]int64{t.zero}, t.bobs...)
		p := make([]float64, 0, buckets+1)
		p = append(p, 0)
		tot := 0.0
		for _, e := range t.bexp {
			tot += float64(e)
		}
		for _, e := range t.bexp {
			p = append(p, float64(e)/tot)
		}
		fixSum(p)
		_ = b.Add(o, p)
		tabs, names = append(tabs, b), append(names, "bucket")
		pt := &stattest.Table{}
		p = make([]float64, pitBins)
		for i := range p {
			p[i] = 1.0 / pitBins
		}
		_ = pt.Add(t.pit, p)
		tabs, names = append(tabs, pt), append(names, "pit")
		pq := &stattest.Table{}
		_ = pq.Add(t.pitq, p)
		tabs, names = append(tabs, pq), append(names, "pit-q")
	}
	ps := make([]float64, len(tabs))
	for i, tb := range tabs {
		r, _ := tb.Test(0)
		mdt := 0.0
		if r.DF > 0 && r.N > 0 {
			mdt = stattest.MinDetectableTV(r.N, r.DF, level, power)
		}
		tvs = append(tvs, mdt)
		vd.Tests = append(vd.Tests, check.Test{Name: names[i], Stat: r.Stat, DF: r.DF, PValue: r.PValue, Cells: r.Cells, Pooled: r.Pooled, MinDetTV: mdt, Warnings: r.Warnings})
		ps[i] = r.PValue
	}
	holm := stattest.Holm(ps)
	vd.PValue = 1
	for i := range vd.Tests {
		vd.Tests[i].PHolm = holm[i]
		vd.PValue = min(vd.PValue, holm[i])
	}
	vd.MinDetectableTV = tvs[0]
	vd.Verdict = check.NotDetected
	if vd.PValue < level {
		vd.Verdict = check.Violated
	}
	return vd
}

// fixSum rescales p so that it sums to 1 within stattest.ProbTol despite
// the fixed-point rounding.
func fixSum(p []float64) {
	s := 0.0
	for _, v := range p {
		s += v
	}
	if s > 0 {
		for i := range p {
			p[i] /= s
		}
	}
}
