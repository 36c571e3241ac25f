package check

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/specsim/specsim/sim"
)

// A Seconds budget is spent in three parts: pilot runs of pilotTrials,
// then 4× as many, and so on, until one lasts pilotSeconds or the next
// would take the pilots past pilotShare of the budget (so start-up costs,
// such as the first allocations or an external process's imports, do not
// set the rate); the world rebuilt for the chosen count; the check.
const (
	pilotTrials  = 4096
	pilotSeconds = 0.2
	pilotShare   = 0.2
)

// Check runs the statistical check of rule r on src (a pool or a model
// pair; see the package doc) and combines every test, the outcome
// invariants and, for rules with Edge set, the scripted-coin edge cases
// into one verdict. It is the run's one state (checkState, the whole run
// or cfg's shard) and its assembly.
func Check(ctx context.Context, src sim.Source, r Rule, cfg Config) (Result, error) {
	st, err := checkState(ctx, src, r, cfg, nil, false)
	if st == nil {
		return Result{}, err
	}
	res, aerr := st.rn.assemble(st.tot, st.trials, err != nil, st.cpu)
	if aerr != nil {
		return res, aerr
	}
	return res, err
}

// newCheck validates the check of r on src and builds its runner, sized
// for the whole run's trials: cfg.Trials, or under a Seconds budget the
// count its pilots choose (the pool then binned again for it).
func newCheck(ctx context.Context, src sim.Source, r Rule, cfg Config) (*runner, error) {
	begin := time.Now()
	w, r, cfg, err := newWorld(ctx, src, r, cfg)
	if err != nil {
		return nil, err
	}
	build := time.Since(begin)
	rn := newRunner(w, r, cfg)
	n := cfg.Trials
	if cfg.Seconds > 0 {
		if n, err = rn.budget(ctx, begin, build); err != nil {
			return nil, err
		}
		if w.pool != nil && n != pilotTrials {
			if w, err = poolWorld(ctx, w.pool, r, n); err != nil {
				return nil, err
			}
			rn = newRunner(w, r, cfg)
		}
	}
	rn.size(n)
	return rn, nil
}

// newWorld validates the check of r on src and builds its world (a pool
// binned for max(cfg.Trials, pilotTrials) trials, or for pilotTrials
// under a budget); it returns r and cfg with their defaults.
func newWorld(ctx context.Context, src sim.Source, r Rule, cfg Config) (*world, Rule, Config, error) {
	pool, _ := sim.PoolOf(src.BlockSource)
	pair, isPair := sim.PairOf(src.BlockSource)
	cfg.Gamma = DraftLength(src.BlockSource, cfg.Gamma, r.Branch)
	if err := cfg.defaults(); err != nil {
		return nil, r, cfg, err
	}
	if (r.Steps == nil) == !r.isTree() || (r.Tree != nil && r.TreeSteps != nil) {
		return nil, r, cfg, fmt.Errorf("check: rule %s: give exactly one of a Stepper and a tree rule", r.Name)
	}
	if r.Conform && r.Law == nil && r.TreeLaw == nil {
		return nil, r, cfg, fmt.Errorf("check: conformance to %q needs a rule with an exact law", r.LawName)
	}
	if r.isTree() && r.Branch == nil && r.K < 1 {
		r.K = 1
	}
	switch {
	case pool != nil:
		if cfg.Greedy && !r.Conform {
			return nil, r, cfg, fmt.Errorf("check: greedy rules are checked on model pairs (markov sources) or with 'simulate exact'")
		}
		if pool.Gamma != cfg.Gamma {
			return nil, r, cfg, fmt.Errorf("check: the pool holds %d draft positions but the rule drafts %d; build the source with the same gamma", pool.Gamma, cfg.Gamma)
		}
		// The binning depends on the trial count (binned as for at least
		// pilotTrials); under a budget the world is rebuilt once the
		// pilot has chosen the count.
		n := max(cfg.Trials, pilotTrials)
		if cfg.Seconds > 0 {
			n = pilotTrials
		}
		w, err := poolWorld(ctx, pool, r, n)
		return w, r, cfg, err
	case isPair:
		if r.Steps != nil && StepMode(r.Steps) && (r.Law != nil || r.Conform) {
			// The tests on the emitted tokens read the target's rows after
			// the emitted prefix; a law test needs the rows of the drafts,
			// which the harness computed for drafts the sampler replaced.
			return nil, r, cfg, fmt.Errorf("check: %s samples its own drafts (step mode): the law and conformance tests need the harness's drafts on a model pair; use verify mode or a positional pool (dirichlet:...)", r.Name)
		}
		w, err := newPairWorld(&pair, cfg.Gamma, cfg.Greedy)
		return w, r, cfg, err
	}
	return nil, r, cfg, fmt.Errorf("check: empty source")
}

// poolWorld bins pool for a check of the given trial count (with each
// context's positional models for a tree rule), kept with the pool for the
// next check of the same size: a world is only read once built
// (sim.Pool.Derived).
func poolWorld(ctx context.Context, pool *sim.Pool, r Rule, trials int64) (*world, error) {
	type slot struct{}
	type key struct {
		trials int64
		tree   bool
	}
	w, err := pool.Derived(slot{}, key{trials, r.isTree()}, func() (any, error) {
		w, err := newPoolWorld(ctx, pool, trials)
		if err == nil && r.isTree() {
			w.buildPos()
		}
		return w, err
	})
	if err != nil {
		return nil, err
	}
	return w.(*world), nil
}

// assemble turns a merged tally of done trials into the result: the
// summaries, the fits, the edge cases, the tests and the verdict (finish).
func (rn *runner) assemble(tot *tally, done int64, interrupted bool, cpu time.Duration) (Result, error) {
	r, cfg := rn.rule, rn.cfg
	res := Result{Mode: "lossless", Level: cfg.Level, Power: cfg.Power, Trials: done, Seed: cfg.Seed, Interrupted: interrupted,
		Edge: NotApplicable, EdgeConform: NotApplicable, CPUSeconds: math.NaN(), TVAtOneCPUSecond: math.NaN()}
	if cpu > 0 {
		res.CPUSeconds = cpu.Seconds()
	}
	if r.Conform {
		res.Mode = "conform:" + r.LawName
	}
	if rn.lawOn {
		res.LawEvery = rn.lawEvery
	}
	if rn.marg {
		res.prefix = &rn.hashed
	}
	if err := rn.final(tot); err != nil {
		return res, err
	}
	tot.fill(&res, done)
	for i, c := range cfg.Candidates {
		if tot.fitN > 0 {
			res.Fits = append(res.Fits, Fit{Name: c.Name, Summary: c.Summary, Lossless: c.Lossless, MeanLogLik: tot.meanFit(i), Steps: tot.fitN})
		}
	}
	sortFits(res.Fits)
	rn.edges(&res)
	if pc := tot.pitCounts(); cfg.Profile && pc != nil {
		res.Profile = rn.pit.profile(pc)
	}
	tests, terr := rn.tests(tot, -1)
	if terr != nil {
		return res, terr
	}
	kinds, terr := rn.kindPending(tot)
	if terr != nil {
		return res, terr
	}
	if ferr := finish(&res, cfg, tests, kinds...); ferr != nil {
		return res, ferr
	}
	res.suspects = cfg.Bugs
	res.rerank()
	if tv := res.MinDetectableTV * math.Sqrt(res.CPUSeconds); tv < math.Inf(1) {
		res.TVAtOneCPUSecond = tv
	}
	return res, nil
}

// edges runs the rule's scripted edge cases into res (rules with Edge).
func (rn *runner) edges(res *Result) {
	r := rn.rule
	if r.Edge == nil {
		return
	}
	res.Edge = Passed
	if eerr := EdgeCheck(r.Edge); eerr != nil {
		res.Edge, res.EdgeMsg = Violated, eerr.Error()
	}
	if r.Conform && r.Law != nil {
		res.EdgeConform = Passed
		if eerr := EdgeConform(r.Edge, r.Law); eerr != nil {
			res.EdgeConform, res.EdgeConformMsg = Violated, eerr.Error()
		}
	}
}

// newRunner returns the runner of rule r on world w.
func newRunner(w *world, r Rule, cfg Config) *runner {
	rn := &runner{w: w, rule: r, cfg: cfg, marg: !r.Conform}
	if r.isTree() {
		rn.lawOn = r.TreeLaw != nil
	} else {
		rn.lawOn = r.Law != nil
	}
	if w.pool != nil {
		rn.posLen = w.nc * (w.g + 1) * w.bins
		rn.jLen = w.nc * pow(w.jb, w.g+1)
	} else {
		rn.posLen = (w.g + 1) * w.states * w.v
		if w.jointLen > 0 {
			rn.jLen = pow(w.v, w.jointLen)
		}
	}
	return rn
}

// budget times pilot runs (see pilotTrials) and returns the trial count
// that fills what is left of cfg.Seconds since begin, less rebuild (the
// time to bin a pool again for the chosen count; zero for pairs, which
// are binned once). The pilots' trials are discarded: the check itself
// runs trials 0..n-1, so its result is that of a check of n trials.
func (rn *runner) budget(ctx context.Context, begin time.Time, rebuild time.Duration) (int64, error) {
	if rn.w.pool == nil {
		rebuild = 0
	}
	cfg := rn.cfg
	cfg.Progress = nil
	pilot := newRunner(rn.w, rn.rule, cfg)
	// A run keeps min(workers, chunks) goroutines busy; a small pilot is
	// one chunk on one worker, so its rate is scaled to the run's.
	workers := min(sim.Workers(cfg.Workers), runtime.GOMAXPROCS(0))
	busy := func(n int64) float64 {
		units := (n + int64(cfg.Batch) - 1) / int64(cfg.Batch)
		return float64(min(int64(workers), (units+sim.ChunkSize-1)/sim.ChunkSize))
	}
	for size := int64(pilotTrials); ; size *= 4 {
		t := time.Now()
		if _, _, err := pilot.run(ctx, size); err != nil {
			return 0, err
		}
		took := time.Since(t).Seconds()
		used := time.Since(begin).Seconds() + rebuild.Seconds()
		if took >= pilotSeconds || used+4*took > pilotShare*cfg.Seconds {
			perWorker := took * busy(size) / float64(size) // seconds a trial on one worker
			left := 0.95 * (cfg.Seconds - used)
			n := int64(min(left*float64(workers)/perWorker, sim.MaxTrials))
			if b := busy(n); b < float64(workers) {
				n = int64(left * b / perWorker)
			}
			return max(pilotTrials, n), nil
		}
	}
}

// ChainRule is the Rule of a harness chain rule: verified through
// AlgorithmStepper, its own law (if it has one) for the sampler-vs-law
// test, and its edge cases.
func ChainRule(name string, a sim.Algorithm) Rule {
	r := Rule{Name: name, Steps: AlgorithmStepper{A: a}, Edge: a, LawName: name}
	if lw, ok := a.(sim.Lawer); ok {
		r.Law = lw
	}
	return r
}

// lossless is ChainRule without the law test.
func lossless(a sim.Algorithm) Rule {
	r := ChainRule("", a)
	r.Law = nil
	return r
}

// Pool checks chain rule a on a positional pool with the lossless tests
// and the edge cases (see Check); the law test, whose per-step cost grows
// with V, is left out (Check with ChainRule runs it).
func Pool(ctx context.Context, pl *sim.Pool, a sim.Algorithm, cfg Config) (Result, error) {
	return Check(ctx, sim.Source{Spec: pl.Name, BlockSource: pl}, lossless(a), cfg)
}

// Pair checks chain rule a on a small model pair like Pool.
func Pair(ctx context.Context, pr sim.Pair, a sim.Algorithm, cfg Config) (Result, error) {
	ch, err := sim.NewChain(pr, cfg.Gamma)
	if err != nil {
		return Result{}, err
	}
	return Check(ctx, sim.Source{Spec: pr.Name, BlockSource: ch}, lossless(a), cfg)
}
