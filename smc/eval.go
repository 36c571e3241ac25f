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
	nTop := 0
	for nTop < len(ex.Post) && ex.Post[nTop].P >= GroupMin {
		nTop++
	}
	G := nTop + 1
	pool := sync.Pool{New: func() any {
		sp, _ := NewSampler(m, s, c)
		return &evalScratch{sp: sp, stream: sim.NewStream(), phat: make([]float64, len(ex.Post)), gsum: make([]float64, G)}
	}}
	Nf := float64(c.N)
	newAcc := func() *evalAcc {
		return &evalAcc{sizeMin: math.MaxInt, gs: make([]stattest.Sums, G)}
	}
	trial := func(i int64, a *evalAcc) {
		sc := pool.Get().(*evalScratch)
		defer pool.Put(sc)
		res := sc.sp.Run(sc.stream.Reset(seed, sim.StreamID(stream, uint64(i))))
		a.z.Add(res.ZHat / ex.Z)
		for _, sz := range res.Sizes {
			a.sizeSum += float64(sz)
			a.sizeN++
			a.sizeMin, a.sizeMax = min(a.sizeMin, sz), max(a.sizeMax, sz)
		}
		for g := range sc.gsum {
			sc.gsum[g] = 0
		}
		if res.ZHat > 0 {
			W, W2, outside := 0.0, 0.0, 0.0
			for _, p := range res.Particles {
				W += p.W
				W2 += p.W * p.W
			}
			sc.touched = sc.touched[:0]
			for _, p := range res.Particles {
				if p.W == 0 {
					continue
				}
				sc.kb = Key(sc.kb, p.Tokens)
				j := ex.Index(sc.kb)
				g := nTop
				if j < 0 {
					outside += p.W / W
				} else {
					if sc.phat[j] == 0 {
						sc.touched = append(sc.touched, j)
					}
					sc.phat[j] += p.W / W
					if j < nTop {
						g = j
					}
				}
				sc.gsum[g] += p.W / (Nf * ex.Z)
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
		} else {
			a.zero++
		}
		for g, x := range sc.gsum {
			a.gs[g].Add(x)
		}
	}
	merge := func(d, s *evalAcc) {
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
	a, _, err := sim.MonteCarlo(ctx, runs, opt, newAcc, trial, merge)
	st := Stats{Runs: a.z.N, ZRatio: a.z.Summary(0.95), TV: a.tv.Summary(0.95), ZeroRuns: a.zero}
	if a.tv.N > 0 {
		st.ESS = a.ess / float64(a.tv.N)
	}
	if a.sizeN > 0 {
		st.SizeMean, st.SizeMin, st.SizeMax = a.sizeSum/float64(a.sizeN), a.sizeMin, a.sizeMax
	}
	rest := 1.0
	for g := range G {
		gr := Group{Label: "rest", Est: a.gs[g].Summary(0.95)}
		if g < nTop {
			gr.P = ex.Post[g].P
			gr.Label = joinInts(ex.Post[g].Tokens)
			rest -= gr.P
		} else {
			gr.P = math.Max(0, rest)
		}
		st.Groups = append(st.Groups, gr)
	}
	return st, err
}
