package check

import (
	"context"
	"fmt"
	"time"

	"github.com/specsim/specsim/sim"
)

// pilotTrials is the size of the timing run of a Seconds budget.
const pilotTrials = 4096

// Check runs the statistical check of rule r on src (a pool or a model
// pair; see the package doc) and combines every test, the outcome
// invariants and, for rules with Edge set, the scripted-coin edge cases
// into one verdict.
func Check(ctx context.Context, src sim.Source, r Rule, cfg Config) (Result, error) {
	pool, _ := sim.PoolOf(src.BlockSource)
	pair, isPair := sim.PairOf(src.BlockSource)
	if pool != nil {
		cfg.Gamma = pool.Gamma
	}
	if len(r.Branch) > 0 {
		cfg.Gamma = len(r.Branch)
	}
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	if (r.Steps == nil) == (r.Tree == nil) {
		return Result{}, fmt.Errorf("check: rule %s: give exactly one of a Stepper and a tree rule", r.Name)
	}
	if r.Conform && r.Law == nil && r.TreeLaw == nil {
		return Result{}, fmt.Errorf("check: conformance to %q needs a rule with an exact law", r.LawName)
	}
	if r.Tree != nil && r.Branch == nil && r.K < 1 {
		r.K = 1
	}
	var w *world
	switch {
	case pool != nil:
		if cfg.Greedy && !r.Conform {
			return Result{}, fmt.Errorf("check: greedy rules are checked on model pairs (markov sources) or with 'simulate exact'")
		}
		if pool.Gamma != cfg.Gamma {
			return Result{}, fmt.Errorf("check: the pool holds %d draft positions but the rule drafts %d; build the source with the same gamma", pool.Gamma, cfg.Gamma)
		}
		// The binning depends on the trial count: take the budget's
		// estimate when there is one.
		var err error
		if w, err = newPoolWorld(ctx, pool, max(cfg.Trials, pilotTrials)); err != nil {
			return Result{}, err
		}
		if r.Tree != nil {
			w.buildPos()
		}
	case isPair:
		if r.Steps != nil && StepMode(r.Steps) {
			return Result{}, fmt.Errorf("check: %s samples its own drafts (step mode): a model pair's draft rows depend on the drafted prefix; use a positional pool (dirichlet:...)", r.Name)
		}
		var err error
		if w, err = newPairWorld(&pair, cfg.Gamma, cfg.Greedy); err != nil {
			return Result{}, err
		}
	default:
		return Result{}, fmt.Errorf("check: empty source")
	}
	rn := &runner{w: w, rule: r, cfg: cfg, marg: !r.Conform, lawOn: r.Law != nil || r.TreeLaw != nil}
	if r.Tree != nil {
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
	n := cfg.Trials
	if cfg.Seconds > 0 {
		start := time.Now()
		pilot := cfg
		pilot.Progress = nil
		prn := &runner{w: rn.w, rule: rn.rule, cfg: pilot, marg: rn.marg, lawOn: rn.lawOn, posLen: rn.posLen, jLen: rn.jLen}
		if _, _, err := prn.run(ctx, pilotTrials); err != nil {
			return Result{}, err
		}
		per := time.Since(start).Seconds() / pilotTrials
		left := cfg.Seconds - time.Since(start).Seconds()
		n = max(pilotTrials, int64(0.95*left/per))
	}
	tot, done, err := rn.run(ctx, n)
	if tot == nil {
		return Result{}, err
	}
	res := Result{Mode: "lossless", Level: cfg.Level, Power: cfg.Power, Trials: done, Seed: cfg.Seed, Interrupted: err != nil, Edge: NotApplicable}
	if r.Conform {
		res.Mode = "conform:" + r.LawName
	}
	tot.fill(&res, done)
	if r.Edge != nil {
		res.Edge = Preserved
		if eerr := EdgeCheck(r.Edge); eerr != nil {
			res.Edge, res.EdgeMsg = Violated, eerr.Error()
		}
	}
	tests, terr := rn.tests(tot)
	if terr != nil {
		return res, terr
	}
	if ferr := finish(&res, cfg, tests); ferr != nil {
		return res, ferr
	}
	return res, err
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
