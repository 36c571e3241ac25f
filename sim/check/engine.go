package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/stattest"
)

// Rule is what a check drives: a chain Stepper (the harness's own rules
// through AlgorithmStepper, or an external implementation) or a tree rule
// with its drafter settings.
type Rule struct {
	Name string
	// Steps verifies single draft chains. Exactly one of Steps and Tree is
	// set.
	Steps Stepper
	// Tree verifies draft trees, drafted in every context by the drafter
	// Drafter builds over the context's draft model q (the caller resolves
	// the drafter: package sim/draft). Draft, K and Branch describe it for
	// the report; Branch, if set, gives the children per depth and
	// overrides K and the depth γ.
	Tree sim.TreeAlgorithm
	// TreeSteps, instead of Tree, verifies a batch of trees per call (an
	// external implementation of tree verification); the drafter settings
	// are Tree's.
	TreeSteps sim.TreeStepper
	Drafter   func(q sim.Model, depth int) (sim.Drafter, error)
	// DrafterAt, when set, builds the drafter of pool context c instead
	// of Drafter (the row kinds of a composed pool draft their own trees).
	DrafterAt func(c int, q sim.Model, depth int) (sim.Drafter, error)
	Draft     sim.DraftKind
	K         int
	Branch    []int
	// Law (chain) or TreeLaw (tree) is the exact conditional law the law
	// test compares each step's outcome with: the rule's own law (the
	// sampler-vs-law test) or, with Conform, a named rule's (the
	// conformance test). Nil skips the test.
	Law     sim.Lawer
	TreeLaw sim.TreeLawer
	// LawName names the rule whose law Law/TreeLaw is.
	LawName string
	// Conform runs the conformance test alone: the verdict then says
	// whether the steps follow LawName's law given the drafts ("implements
	// rule R"), not whether the emitted law is the target's.
	Conform bool
	// Edge, if set, is driven by EdgeCheck, which enters a losslessness
	// verdict, and with Conform by EdgeConform against Law, which enters
	// the conformance verdict (EdgeCheck is then reported beside it).
	Edge sim.Algorithm
}

// isTree reports whether r verifies trees (Tree or TreeSteps).
func (r Rule) isTree() bool { return r.Tree != nil || r.TreeSteps != nil }

// tally is one chunk's accumulator.
type tally struct {
	// fams are the states of the runner's families (Family), in its
	// order; with row kinds, a family kept per kind counts into
	// kinds[kind].fams (kind: the current round's) and fams holds the
	// pooled sum once the run is merged (poolFamilies).
	fams     []Family
	kind     int
	accepted int64
	examined int64
	emitted  int64
	emitSq   int64
	invalid  int64
	fit      []float64 // per candidate: Σ log-probability of the outcomes
	fitN     int64
	// fitSum is a merged tally's fits: the exact sum of its chunks' fit
	// (stattest.ExactSum), so a total does not depend on how its chunks
	// were grouped (shards, a resumed run). err is the first merge that
	// could not be summed.
	fitSum []stattest.ExactSum
	err    error
	pit    *pitCounts
	// the previous round's transforms in token-index order and its trial,
	// for the cross-row test (rows 2k and 2k+1 of a batch unit)
	prevU     []float64
	prevTrial int64
	// hashed is the prefix tests' family's counts (hashed.go), which the
	// PIT loop hands each position's transform in a random order
	hashed *hashedCounts
	sc     *scratch
	// kinds are the per-row-kind counts (Config.RowKinds).
	kinds []kindTally
}

// scratch is the per-chunk working storage of the recorder (not merged).
type scratch struct {
	seq  []int
	row  []float64
	prow []float64    // the untransformed target row (greedy pairs)
	u    [2][]float64 // one trial's transforms, by order
	law  sim.Law
	mass []float64 // the law test's block masses (lawBlocks)
	tlaw sim.TreeLaw
	path []int
	// fitBlock is a round's block cut to its row kind's draft length
	// (kindBlock)
	fitBlock sim.Block
	// obs is the round's view handed to the families
	obs roundObs
}

func (t *tally) record(accepted, examined, emitted int) {
	t.accepted += int64(accepted)
	t.examined += int64(examined)
	t.emitted += int64(emitted)
	t.emitSq += int64(emitted * emitted)
}

// merge adds src (a chunk's tally or a merged one) into dst, a merged
// tally: counts are added, and the law test's moments and the fits are
// summed exactly into dst.fitSum; the families merge their states.
func merge(dst, src *tally) {
	if dst.kinds != nil {
		mergeKinds(dst, src)
	}
	dst.err = cmp.Or(dst.err, mergeFamilies(dst, src))
	dst.accepted += src.accepted
	dst.examined += src.examined
	dst.emitted += src.emitted
	dst.emitSq += src.emitSq
	dst.invalid += src.invalid
	if n := max(len(src.fit), len(src.fitSum)); dst.fitSum == nil && n > 0 {
		dst.fitSum = make([]stattest.ExactSum, n)
	}
	for i, v := range src.fit {
		dst.fitSum[i].Add(v)
	}
	for i := range src.fitSum {
		dst.fitSum[i].AddSum(&src.fitSum[i])
	}
	dst.fitN += src.fitN
	dst.err = cmp.Or(dst.err, src.err)
}

// addLaw adds a chunk's law-test accumulator het and a merged tally's
// exact sum law (either may be nil) into *dst, made on first use.
func addLaw(dst **stattest.HeteroSum, het *stattest.Hetero, law *stattest.HeteroSum) error {
	if het == nil && law == nil {
		return nil
	}
	if *dst == nil {
		k := 0
		if het != nil {
			k = het.K()
		} else {
			k = law.K()
		}
		*dst = stattest.NewHeteroSum(k)
	}
	var err error
	if het != nil {
		err = (*dst).AddHetero(het)
	}
	if law != nil {
		err = cmp.Or(err, (*dst).AddSum(law))
	}
	return err
}

// meanFit returns candidate i's mean log-likelihood.
func (t *tally) meanFit(i int) float64 {
	return t.fitSum[i].Float64() / float64(t.fitN)
}

func (t *tally) fill(r *Result, n int64) {
	if n == 0 {
		return
	}
	r.MeanAccepted = float64(t.accepted) / float64(n)
	if t.examined > 0 {
		r.AlphaHat = float64(t.accepted) / float64(t.examined)
	}
	s := stattest.Summarize(float64(t.emitted), float64(t.emitSq), n, 0.95)
	r.MeanEmitted, r.EmittedCI = s.Mean, [2]float64{s.Lo, s.Hi}
	r.Invalid = t.invalid
}

// runner runs one check: the world, the rule and the tallies' layout.
type runner struct {
	w      *world
	rule   Rule
	cfg    Config
	marg   bool // the lossless tests (per position, joint)
	lawOn  bool
	posLen int
	jLen   int
	// scratch recycles the chunks' working storage.
	scratch sync.Pool
	// loop drafts and verifies the rounds (built by run).
	loop *run.Loop
	// pit lays out the PIT tests and lb is the law test's bins per
	// accepted length (both sized by run for its trial count).
	pit    pitLayout
	shift  shiftLayout
	hashed hashedLayout
	lb     int
	// lawWidths is lawBlocks, for the hot path.
	lawWidths []int
	// lawEvery is the law test's stride (Config.LawEvery resolved).
	lawEvery int64
	// fitSteps is the number of first steps the candidates' fits cover.
	fitSteps int64
	// n is the trials of the whole run the runner is sized for (size).
	n int64
	// fams makes the states of the check's families (families), in
	// their order.
	fams []familyMaker
}

func (rn *runner) newTally() *tally {
	t := &tally{prevTrial: -1, fit: make([]float64, len(rn.cfg.Candidates))}
	if rn.marg {
		t.prevU = make([]float64, rn.w.g+1)
	}
	t.fams = rn.newFamilies()
	for _, f := range t.fams {
		if h, ok := f.(*hashedFamily); ok {
			t.hashed = h.c // the PIT loop keeps its transforms there
		}
	}
	rn.newKinds(t)
	return t
}

// getScratch returns the recorder's working storage for one chunk; the
// merge hands it back, so the storage kept is about one per worker, not
// one per chunk (memory does not grow with the trial count).
func (rn *runner) getScratch() *scratch {
	if sc, ok := rn.scratch.Get().(*scratch); ok {
		return sc
	}
	w := rn.w
	return &scratch{mass: make([]float64, w.g+3), seq: make([]int, 0, w.g+2), row: make([]float64, w.v),
		prow: make([]float64, w.v), u: [2][]float64{make([]float64, w.g+1), make([]float64, w.g+1)}}
}

// newLoop builds the round loop of the check: trial t is in context
// t mod contexts of a pool (a model pair has one), chains are drafted by
// the pool's alias tables or autoregressively from the pair, trees by the
// rule's drafter over each context.
func (rn *runner) newLoop() (*run.Loop, error) {
	w, r := rn.w, rn.rule
	l := &run.Loop{Seed: rn.cfg.Seed, Keys: run.Named("check"), Batch: rn.cfg.Batch}
	if !r.isTree() {
		l.Verifiers = []run.Verifier{run.Batch(r.Steps)}
		if w.pool != nil {
			l.Chains = run.Cycle(w.pool)
		} else {
			ch, err := sim.NewChain(*w.pair, w.g)
			if err != nil {
				return nil, err
			}
			l.Chains = run.Blocks(ch)
		}
		return l, nil
	}
	l.Verifiers = []run.Verifier{run.Tree(r.Tree)}
	if r.TreeSteps != nil {
		l.Verifiers = []run.Verifier{run.BatchTree(r.TreeSteps)}
	}
	if r.Drafter == nil {
		return nil, fmt.Errorf("check: tree rule %s has no drafter", r.Name)
	}
	qs, ps := w.posQ, w.posP // a pool: one drafter per context
	if w.pool == nil {
		qs, ps = []sim.Model{w.pair.Q}, []sim.Model{w.target}
	}
	ds := make([]sim.Drafter, len(qs))
	for i, q := range qs {
		mk := r.Drafter
		if r.DrafterAt != nil {
			mk = func(q sim.Model, depth int) (sim.Drafter, error) { return r.DrafterAt(i, q, depth) }
		}
		d, err := mk(q, w.g)
		if err != nil {
			return nil, err
		}
		ds[i] = d
	}
	l.Trees = run.CycleTrees(ds, ps)
	return l, nil
}

// record1 checks and counts one round into t.
func (rn *runner) record1(t *tally, r *run.Round) error {
	if t.sc == nil {
		t.sc = rn.getScratch()
	}
	if r.Tree != nil {
		return rn.recordTree(t, r)
	}
	w, sc := rn.w, t.sc
	b, o := r.Block, r.Outcome()
	c := max(b.Ctx, 0)
	bad := false
	if StepMode(rn.rule.Steps) {
		// The Stepper's own drafts: a token outside the vocabulary is
		// its error; on a pool (whose draft rows do not depend on the
		// prefix) one of draft probability 0 cannot have been drawn from
		// q, an invalid outcome.
		for i, x := range b.Tokens {
			if x < 0 || x >= w.v {
				return fmt.Errorf("step %d: draft token %d at position %d is outside the vocabulary [0, %d)", r.Trial, x, i, w.v)
			}
			bad = bad || (w.pool != nil && b.Q[i].At(x) <= 0)
		}
	}
	if sim.CheckOutcome(b, o) != nil {
		bad = true
		o = sim.Outcome{Accepted: min(max(o.Accepted, 0), w.g), Next: sim.NoToken}
	}
	if !rn.marg && bad {
		t.invalid++ // the lossless tests' count adds emitted tokens of target probability 0
	}
	g := w.g
	t.record(o.Accepted, min(o.Accepted+1, g), o.Emitted())
	if r.Trial < rn.fitSteps && sim.CheckOutcome(b, o) == nil {
		rn.fit(t, rn.kindBlock(r, b, &sc.fitBlock), o)
	}
	obs := &sc.obs
	*obs = roundObs{r: r, sc: sc, c: c, kind: t.kind, b: b, o: o}
	t.addFamilies(obs, false)
	if rn.marg {
		seq := append(sc.seq[:0], b.Tokens[:o.Accepted]...)
		if o.Next != sim.NoToken {
			seq = append(seq, o.Next)
		}
		rn.count(r, c, seq, t, bad)
	}
	return nil
}

// recordTree checks and counts one tree round.
func (rn *runner) recordTree(t *tally, r *run.Round) error {
	w, sc, tree := rn.w, t.sc, r.Tree
	c := 0
	if w.pool != nil {
		c = int(r.Trial % int64(w.nc))
	}
	o := r.TreeOutcome()
	bad := false
	if o.Node < 0 || o.Node >= len(tree.Nodes) || (o.Next != sim.NoToken && (o.Next < 0 || o.Next >= w.v)) {
		bad = true
		o = sim.TreeOutcome{Node: 0, Next: sim.NoToken}
	}
	if !rn.marg && bad {
		t.invalid++ // the lossless tests' count adds emitted tokens of target probability 0
	}
	depth := tree.Nodes[o.Node].Depth
	emitted := depth
	if o.Next != sim.NoToken {
		emitted++
	}
	t.record(depth, min(depth+1, w.g), emitted)
	obs := &sc.obs
	*obs = roundObs{r: r, sc: sc, c: c, kind: t.kind, tree: tree, node: o.Node, depth: depth, next: o.Next}
	t.addFamilies(obs, false)
	if rn.marg {
		seq := tree.Path(sc.seq[:0], o.Node)
		if o.Next != sim.NoToken {
			seq = append(seq, o.Next)
		}
		rn.count(r, c, seq, t, bad)
	}
	return nil
}

// count continues seq (the round's emitted tokens) with the target to
// γ+1 tokens and counts its cells: the binned or per-state tests, and the
// PIT of every position under its target row given the emitted prefix.
// A token the round emitted with target probability 0 is an invalid
// outcome (checked here from the target's own rows, so it holds for
// drafts a step-mode sampler chose too).
func (rn *runner) count(r *run.Round, c int, seq []int, t *tally, bad bool) {
	w, g, sc := rn.w, rn.w.g, t.sc
	if len(seq) > g+1 {
		seq = seq[:g+1]
	}
	emitted := len(seq)
	var rc *rand.Rand
	if emitted <= g {
		rc = r.Rand(run.Continuation)
	}
	for i := 0; i <= g; i++ {
		var a, b float64
		v := rn.pit.pitV(r.Trial, i)
		if w.pool != nil {
			if i >= len(seq) {
				seq = append(seq, w.pAlias[w.poolIdx(c, i)].Sample(rc))
			}
			tb := &w.pitTab[w.poolIdx(c, i)]
			bad = bad || (i < emitted && tb.p[seq[i]] <= 0)
			a, b = tb.pit(seq[i], v)
			hashedPIT(&rn.hashed, t.hashed, i, r.Trial, tb.p, w.poolIdx(c, i), seq[i], v)
		} else {
			row := sc.row // the target row after the emitted prefix
			if w.oneHot {
				w.pair.P.Next(seq[:i], sc.prow)
				bad = bad || (i < emitted && sc.prow[seq[i]] <= 0)
				sim.OneHot(row, w.v, sim.Argmax(sc.prow))
			} else {
				w.target.Next(seq[:i], row)
				bad = bad || (i < emitted && row[seq[i]] <= 0)
			}
			if i >= len(seq) {
				seq = append(seq, sim.SampleCDF(rc.Float64(), row))
			}
			a, b = pitRow(row, seq[i], v)
			hashedPIT(&rn.hashed, t.hashed, i, r.Trial, row, -1, seq[i], v)
		}
		sc.u[byP][i], sc.u[byIdx][i] = a, b
	}
	sc.seq = seq
	if bad {
		t.invalid++
	}
	obs := &sc.obs
	obs.seq, obs.u = seq, &sc.u
	if rn.pit.cross {
		// rows 2k and 2k+1 of a unit: every position's pair of transforms
		j := r.Trial - r.Unit*int64(rn.cfg.Batch)
		obs.pairPrev, obs.prevU = j%2 == 1 && t.prevTrial == r.Trial-1, t.prevU
	}
	t.addFamilies(obs, true)
	if rn.pit.cross {
		copy(t.prevU, sc.u[byIdx])
		t.prevTrial = r.Trial
	}
}

// The candidates' fits: they cover the first steps of a check, as many as
// cost about fitCost row entries (each law is O((γ+1)V) a step) within
// [minFitSteps, maxFitSteps]; an impossible outcome counts fitFloor. An
// in-process rule's fits get a fitCostInProcess-th of that cost (about
// half a CPU-second), since its steps cost far less than an external
// implementation's round trips, and up to a 1/fitShare share of the steps
// of a long check, so that a bug whose law departs little is named at the
// size that detects it.
const (
	fitCost          = 5e8
	fitCostInProcess = 10
	minFitSteps      = 64
	maxFitSteps      = 4096
	fitShare         = 8
)

var fitFloor = math.Log(1e-300)

// size lays out the tests of a run of n trials (the whole run's, for a
// shard too): the PIT grids, the law test's stride and bins, and the
// candidates' fit steps.
func (rn *runner) size(n int64) {
	rn.n = n
	rn.pit = newPITLayout(rn.w.g, n, rn.cfg.Seed, rn.cfg.CrossRow && rn.cfg.Batch >= 2)
	rn.shift = newShiftLayout(rn.pit.cross, rn.cfg.Batch, rn.pit.g1, rn.pit.pb)
	rn.hashed = newHashedLayout(rn.w.g, rn.w.v, rn.w.nc, n, rn.cfg.Seed, rn.pit.cross)
	if rows := rn.w.nc * (rn.w.g + 1); rn.w.pool != nil && int64(rows)*int64(rn.w.v) <= hashCacheEntries {
		rn.hashed.cacheRows = rows
	}
	rn.lawEvery = rn.cfg.LawEvery
	if rn.lawEvery == 0 {
		rn.lawEvery = 1
		if _, inProcess := rn.rule.Steps.(AlgorithmStepper); !rn.rule.Conform && (inProcess || rn.rule.Tree != nil) {
			rn.lawEvery = AutoLawEvery(rn.w.g, rn.w.v)
		}
	}
	rn.lb = lawTestBins(rn.w.g, (n+rn.lawEvery-1)/rn.lawEvery)
	rn.lawWidths = rn.lawBlocks()
	rn.fams = rn.families()
	if nc := len(rn.cfg.Candidates); nc > 0 {
		cost, steps := int64(fitCost), int64(maxFitSteps)
		if _, inProcess := rn.rule.Steps.(AlgorithmStepper); inProcess {
			// an in-process step costs far less than an external one
			cost, steps = cost/fitCostInProcess, max(steps, n/fitShare)
		}
		rn.fitSteps = min(max(cost/(int64(rn.w.g+1)*int64(rn.w.v)*int64(nc)), minFitSteps), steps)
	}
}

// run sizes the runner for n trials and runs them all (the pilots of a
// Seconds budget).
func (rn *runner) run(ctx context.Context, n int64) (*tally, int64, error) {
	rn.size(n)
	return rn.runRange(ctx, 0, rn.units(), false)
}

// units is the number of units of the sized run.
func (rn *runner) units() int64 {
	b := int64(rn.cfg.Batch)
	return (rn.n + b - 1) / b
}

// runRange runs units lo..hi-1 of the sized run and returns their
// merged tally (nil on an error other than a cancellation), the trials
// it holds and the error; whole keeps, on a cancellation, only whole
// chunks (sim.MCOptions.WholeChunks), so that a resumed range has the
// chunks of an uninterrupted one.
func (rn *runner) runRange(ctx context.Context, lo, hi int64, whole bool) (*tally, int64, error) {
	if rn.loop == nil {
		l, err := rn.newLoop()
		if err != nil {
			return nil, 0, err
		}
		rn.loop = l
	}
	if err := rn.reserveMem(); err != nil {
		return nil, 0, err
	}
	opt := sim.MCOptions{Workers: rn.cfg.Workers, Progress: rn.cfg.Progress, WholeChunks: whole}
	tot, done, err := run.RoundsRange(ctx, lo, hi, rn.n, rn.loop, opt, rn.newTally, rn.record, func(dst, src *tally) {
		merge(dst, src)
		if src.sc != nil {
			rn.scratch.Put(src.sc)
			src.sc = nil
		}
	})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		// a drafter's, the rule's or the recorder's error
		return nil, 0, fmt.Errorf("check: %s: %w", rn.rule.Name, err)
	}
	if tot != nil && tot.err != nil {
		return nil, 0, fmt.Errorf("check: %s: %w", rn.rule.Name, tot.err)
	}
	return tot, done, err
}

// final readies a merged tally's tests: the pooled sums of its row
// kinds' family states.
func (rn *runner) final(t *tally) error { return rn.poolFamilies(t) }

// fit adds the log-probability of outcome o given the drafts of b under
// every candidate's law to t's fits.
func (rn *runner) fit(t *tally, b *sim.Block, o sim.Outcome) {
	sc := t.sc
	for i, c := range rn.cfg.Candidates {
		lp := fitFloor
		if o.Accepted <= len(b.Tokens) && c.Law.Law(b, &sc.law) == nil && sc.law.At(o.Accepted, o.Next) > 0 {
			lp = math.Log(sc.law.At(o.Accepted, o.Next))
		}
		t.fit[i] += max(lp, fitFloor)
	}
	t.fitN++
}

// kindBlock is b as the row of round r saw it: its first γ_k drafts
// where the row's kind drafts γ_k < γ (Config.KindGammas), written into
// dst (no copy of the rows), else b.
func (rn *runner) kindBlock(r *run.Round, b *sim.Block, dst *sim.Block) *sim.Block {
	if rn.cfg.KindGammas == nil {
		return b
	}
	gk := rn.cfg.KindGammas[rn.kindOf(r)]
	if gk <= 0 || gk >= len(b.Tokens) {
		return b
	}
	*dst = *b
	dst.Tokens, dst.Q, dst.P = b.Tokens[:gk], b.Q[:gk], b.P[:gk+1]
	return dst
}

// tests turns the merged tally into the pending tests, every family's
// in order: of every trial (kind -1), or of row kind kind's (no
// cross-row test).
func (rn *runner) tests(t *tally, kind int) ([]Pending, error) { return t.familyTests(kind) }

func pow(b, e int) int {
	r := 1
	for range e {
		r *= b
		if r > 1<<30 {
			return r
		}
	}
	return r
}

// digits writes code's n base-b digits, the first most significant, as
// "(d1, d2, ...)", each plus from (1 for bins counted from 1, 0 for
// tokens).
func digits(code, b, n, from int) string {
	d := make([]string, n)
	for i := n - 1; i >= 0; i-- {
		d[i] = fmt.Sprint(code%b + from)
		code /= b
	}
	return "(" + strings.Join(d, ", ") + ")"
}

// ordinal writes k as an English ordinal: 2nd, 3rd, 11th, 21st.
func ordinal(k int64) string {
	suffix := "th"
	if k%100 < 11 || k%100 > 13 {
		switch k % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", k, suffix)
}
