package smc

import (
	"context"
	"math"
	"sync"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
)

// GroupMin is the posterior mass above which a finished string is its own
// group in the posterior test; lighter strings share one group.
const GroupMin = 0.01

// Stats summarises R independent runs of one scheme on one model against
// the exact answers.
type Stats struct {
	Runs int64
	// ZRatio summarises Ẑ/Z over runs (its mean estimates E[Ẑ]/Z and its
	// variance the relative variance Var(Ẑ)/Z²), with a 95% interval.
	ZRatio stattest.Summary
	// TV summarises the total variation distance between each run's
	// normalised weighted particles and the exact posterior P, over runs
	// with Ẑ > 0.
	TV stattest.Summary
	// ESS is the mean Kish effective sample size (Σw)²/Σw² of the
	// returned particles over runs with Ẑ > 0.
	ESS float64
	// ZeroRuns counts runs that ended with Ẑ = 0.
	ZeroRuns int64
	// SizeMean, SizeMin and SizeMax describe the population size after
	// each resampling step over all runs (0 when nothing was resampled).
	SizeMean         float64
	SizeMin, SizeMax int
	// Groups holds, for each posterior group g (strings with P ≥ GroupMin,
	// most probable first, then the rest), the summary of
	// γ̂_g/Z = (1/(N·Z))·Σ_{i: x_i ∈ g} w_i, whose expectation is P(g) for
	// an unbiased sampler, and P(g) itself.
	Groups []Group
}

// Group is one cell of the posterior test.
type Group struct {
	Label string
	P     float64
	Est   stattest.Summary
}

// evalAcc accumulates runs: z sums Ẑ/Z over every run, tv the TV over
// runs with Ẑ > 0, gs[g] the group estimate γ̂_g/Z over every run.
type evalAcc struct {
	z, tv            stattest.Sums
	ess              float64
	zero             int64
	sizeSum          float64
	sizeN            int64
	sizeMin, sizeMax int
	gs               []stattest.Sums
}

type evalScratch struct {
	sp      *Sampler
	stream  *sim.Stream
	kb      []byte
	phat    []float64
	touched []int
	gsum    []float64
}

// Evaluate runs the scheme R times on m (run r draws from
// sim.NewRand(seed, sim.StreamID(stream, r))) and compares every run with
// the exact answers ex. Results are bit-identical for any worker count
// (sim.MonteCarlo). On cancellation it returns the finished runs' Stats
// and ctx.Err().
func Evaluate(ctx context.Context, m *Model, ex *Exact, s Scheme, c Config, runs int64, seed uint64, stream string, opt sim.MCOptions) (Stats, error) {
	if _, err := NewSampler(m, s, c); err != nil {
		return Stats{}, err
	}
	ev := newEvaluator(m, ex, s, c, seed, stream)
	a, _, err := sim.MonteCarlo(ctx, runs, opt, ev.newAcc, ev.trial, (*evalAcc).merge)
	return ev.stats(a), err
}

// evaluator holds what Evaluate's runs share: the exact answers, the
// number nTop of posterior groups of their own (the rest is group nTop),
// N as a float, the seed and stream of the runs, and a pool of workers'
// scratch.
type evaluator struct {
	ex     *Exact
	nTop   int
	nf     float64
	seed   uint64
	stream string
	pool   sync.Pool
}

// newEvaluator groups the posterior (strings with P ≥ GroupMin, then the
// rest) and sets up the scratch pool of samplers for m, s and c (already
// validated).
func newEvaluator(m *Model, ex *Exact, s Scheme, c Config, seed uint64, stream string) *evaluator {
	nTop := 0
	for nTop < len(ex.Post) && ex.Post[nTop].P >= GroupMin {
		nTop++
	}
	ev := &evaluator{ex: ex, nTop: nTop, nf: float64(c.N), seed: seed, stream: stream}
	G := nTop + 1
	ev.pool.New = func() any {
		sp, _ := NewSampler(m, s, c)
		return &evalScratch{sp: sp, stream: sim.NewStream(), phat: make([]float64, len(ex.Post)), gsum: make([]float64, G)}
	}
	return ev
}

// newAcc is an empty accumulator.
func (ev *evaluator) newAcc() *evalAcc {
	return &evalAcc{sizeMin: math.MaxInt, gs: make([]stattest.Sums, ev.nTop+1)}
}

// trial runs run i and adds its Ẑ/Z, population sizes, and (when Ẑ > 0)
// TV and ESS, or else a zero run, and its group estimates to a.
func (ev *evaluator) trial(i int64, a *evalAcc) {
	sc := ev.pool.Get().(*evalScratch)
	defer ev.pool.Put(sc)
	res := sc.sp.Run(sc.stream.Reset(ev.seed, sim.StreamID(ev.stream, uint64(i))))
	a.z.Add(res.ZHat / ev.ex.Z)
	for _, sz := range res.Sizes {
		a.sizeSum += float64(sz)
		a.sizeN++
		a.sizeMin, a.sizeMax = min(a.sizeMin, sz), max(a.sizeMax, sz)
	}
	for g := range sc.gsum {
		sc.gsum[g] = 0
	}
	if res.ZHat > 0 {
		ev.posterior(sc, res.Particles, a)
	} else {
		a.zero++
	}
	for g, x := range sc.gsum {
		a.gs[g].Add(x)
	}
}

// posterior compares a run's normalised weighted particles with the exact
// posterior: it adds their TV and Kish ESS to a and their group estimates
// γ̂_g/Z to sc.gsum.
func (ev *evaluator) posterior(sc *evalScratch, ps []Particle, a *evalAcc) {
	ex := ev.ex
	W, W2, outside := 0.0, 0.0, 0.0
	for _, p := range ps {
		W += p.W
		W2 += p.W * p.W
	}
	sc.touched = sc.touched[:0]
	for _, p := range ps {
		if p.W == 0 {
			continue
		}
		sc.kb = Key(sc.kb, p.Tokens)
		j := ex.Index(sc.kb)
		g := ev.nTop
		if j < 0 {
			outside += p.W / W
		} else {
			if sc.phat[j] == 0 {
				sc.touched = append(sc.touched, j)
			}
			sc.phat[j] += p.W / W
			if j < ev.nTop {
				g = j
			}
		}
		sc.gsum[g] += p.W / (ev.nf * ex.Z)
	}
	tv, pin := outside, 0.0
	for _, j := range sc.touched {
		tv += math.Abs(sc.phat[j] - ex.Post[j].P)
		pin += ex.Post[j].P
		sc.phat[j] = 0
	}
	tv = (tv + math.Max(0, 1-pin)) / 2
	a.tv.Add(tv)
	a.ess += W * W / W2
}

// merge adds s's runs to d.
func (d *evalAcc) merge(s *evalAcc) {
	d.z.Merge(s.z)
	d.tv.Merge(s.tv)
	d.ess += s.ess
	d.zero += s.zero
	d.sizeSum += s.sizeSum
	d.sizeN += s.sizeN
	d.sizeMin, d.sizeMax = min(d.sizeMin, s.sizeMin), max(d.sizeMax, s.sizeMax)
	for g := range d.gs {
		d.gs[g].Merge(s.gs[g])
	}
}

// stats summarises the runs of a, with the posterior groups' exact P.
func (ev *evaluator) stats(a *evalAcc) Stats {
	st := Stats{Runs: a.z.N, ZRatio: a.z.Summary(0.95), TV: a.tv.Summary(0.95), ZeroRuns: a.zero}
	if a.tv.N > 0 {
		st.ESS = a.ess / float64(a.tv.N)
	}
	if a.sizeN > 0 {
		st.SizeMean, st.SizeMin, st.SizeMax = a.sizeSum/float64(a.sizeN), a.sizeMin, a.sizeMax
	}
	rest := 1.0
	for g := range ev.nTop + 1 {
		gr := Group{Label: "rest", Est: a.gs[g].Summary(0.95)}
		if g < ev.nTop {
			gr.P = ev.ex.Post[g].P
			gr.Label = joinInts(ev.ex.Post[g].Tokens)
			rest -= gr.P
		} else {
			gr.P = math.Max(0, rest)
		}
		st.Groups = append(st.Groups, gr)
	}
	return st
}
