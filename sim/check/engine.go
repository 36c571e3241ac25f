package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/floats"

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

// world is the source and the cell layouts of one check.
type world struct {
	g, v, nc int
	pool     *sim.Pool
	pair     *sim.Pair
	target   sim.Model
	// pools: fine bins per (context, position) sorted by p/q, their target
	// masses, the target alias tables, and the coarse bins of the joint
	// test.
	bins   int
	binOf  []uint16
	binP   []float64
	pAlias []*sim.Alias
	jb     int
	// pairs: target states (the last `order` tokens), their rows, the law
	// bins of each state's tokens, and the full joint when it fits.
	states   int
	stateOf  func([]int) int
	stateRow [][]float64
	oneHot   bool
	jointLen int
	// positional models of each pool context (tree rules).
	posP, posQ []sim.Model
	// pools: the PIT tables of every (context, position) row.
	pitTab []pitTable
}

func (w *world) poolIdx(c, i int) int { return c*(w.g+1) + i }

func newPoolWorld(ctx context.Context, pl *sim.Pool, trials int64) (*world, error) {
	g, v, nc := pl.Gamma, pl.V, pl.Contexts
	w := &world{g: g, v: v, nc: nc, pool: pl}
	perCtx := max(trials/int64(nc), 1)
	w.bins = int(min(int64(maxBins), max(lawBins, perCtx/minPerBin)))
	w.bins -= w.bins % lawBins // coarse bins nest in the fine ones
	w.jb = 2
	for pow(w.jb+1, g+1) <= int(perCtx/minPerBin) && w.jb+1 <= lawBins {
		w.jb++
	}
	bins := w.bins
	w.binOf = make([]uint16, nc*(g+1)*v)
	w.binP = make([]float64, nc*(g+1)*bins)
	w.pAlias = make([]*sim.Alias, nc*(g+1))
	w.pitTab = make([]pitTable, nc*(g+1))
	// order sorts the tokens by (p/q, token): the token breaks ties, so
	// the binning is that of a stable sort by p/q.
	type keyed struct {
		k float64
		x int32
	}
	order := make([]keyed, v)
	p64 := make([]float64, v)
	for c := 0; c < nc; c++ {
		if err := ctx.Err(); err != nil { // V = 32000: ~4 ms a context
			return nil, err
		}
		for i := 0; i <= g; i++ {
			sim.Float64s(p64, pl.PRow(c, i))
			w.pAlias[w.poolIdx(c, i)] = sim.NewAlias(p64)
			w.pitTab[w.poolIdx(c, i)] = newPITTable32(p64)
			for x := range order {
				k := p64[x]
				if i < g {
					if qx := float64(pl.QRow(c, i)[x]); qx > 0 {
						k = p64[x] / qx
					} else {
						k = math.Inf(1)
					}
				}
				order[x] = keyed{k, int32(x)}
			}
			slices.SortFunc(order, func(a, b keyed) int {
				if c := cmp.Compare(a.k, b.k); c != 0 {
					return c
				}
				return cmp.Compare(a.x, b.x)
			})
			tot := 0.0
			for _, o := range order {
				tot += p64[o.x]
			}
			cum := 0.0
			base := w.poolIdx(c, i) * v
			pb := w.binP[w.poolIdx(c, i)*bins:]
			for _, o := range order {
				x := int(o.x)
				b := min(int(cum/tot*float64(bins)), bins-1)
				w.binOf[base+x] = uint16(b)
				pb[b] += p64[x] / tot
				cum += p64[x]
			}
		}
	}
	return w, nil
}

// posModel is a pool context as a sim.Model for the tree drafters: the row
// at position len(ctx), whatever the tokens.
type posModel [][]float64

func (m posModel) Vocab() int                    { return len(m[0]) }
func (m posModel) Next(ctx []int, dst []float64) { copy(dst, m[min(len(ctx), len(m)-1)]) }

// RowView lends the row Next copies (sim.RowViewer): tree drafting over a
// pool copies no rows.
func (m posModel) RowView(ctx []int) sim.Row { return sim.F64(m[min(len(ctx), len(m)-1)]) }

func (w *world) buildPos() {
	pl := w.pool
	for c := 0; c < w.nc; c++ {
		var p, q posModel
		for i := 0; i <= w.g; i++ {
			p = append(p, sim.Float64s(nil, pl.PRow(c, i)))
			if i < w.g {
				q = append(q, sim.Float64s(nil, pl.QRow(c, i)))
			}
		}
		w.posP, w.posQ = append(w.posP, p), append(w.posQ, q)
	}
}

func newPairWorld(pr *sim.Pair, g int, greedy bool) (*world, error) {
	if err := pr.Check(); err != nil {
		return nil, err
	}
	v := pr.P.Vocab()
	w := &world{g: g, v: v, nc: 1, pair: pr, target: pr.P}
	if greedy {
		w.target = sim.Greedy{M: pr.P}
		w.oneHot = true
	}
	var reps [][]int
	switch mk := sim.MarkovOf(pr.P); {
	case mk != nil:
		w.states = len(mk.Rows)
		w.stateOf = mk.State
		for s := 0; s < w.states; s++ {
			var rep []int
			for j, c := mk.K-1, s; j >= 0; j-- {
				if d := c % (v + 1); d != v {
					rep = append([]int{d}, rep...)
				}
				c /= v + 1
			}
			reps = append(reps, rep)
		}
	default:
		if _, ok := pr.P.(sim.Fixed); ok {
			w.states, w.stateOf = 1, func([]int) int { return 0 }
			reps = [][]int{nil}
		}
		// Any other model: its law given the prefix has no finite state
		// to group by, so there are no per-state tests; the PIT tests,
		// which read the target's rows after each emitted prefix, see the
		// whole emitted law of any model.
	}
	for _, rep := range reps {
		row := make([]float64, v)
		w.target.Next(rep, row)
		w.stateRow = append(w.stateRow, row)
	}
	if pow(v, g+1) <= maxJointCells {
		w.jointLen = g + 1
	}
	return w, nil
}

// tally is one chunk's accumulator.
type tally struct {
	pos, joint []int64
	het        *stattest.Hetero
	accepted   int64
	examined   int64
	emitted    int64
	emitSq     int64
	invalid    int64
	fit        []float64 // per candidate: Σ log-probability of the outcomes
	fitN       int64
	pit        *pitCounts
	// the previous round's transforms in token-index order and its trial,
	// for the cross-row test (rows 2k and 2k+1 of a batch unit)
	prevU     []float64
	prevTrial int64
	// shift counts the rows half a batch apart (shift.go)
	shift *shiftCounts
	// hashed counts the prefix tests in re-drawn cells (hashed.go)
	hashed *hashedCounts
	sc     *scratch
	// kinds are the per-row-kind counts (Config.RowKinds): with them,
	// pit and het point at the current round's kind's during the run,
	// and hold the pooled sums once it is merged (poolKinds).
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
}

func (t *tally) record(accepted, examined, emitted int) {
	t.accepted += int64(accepted)
	t.examined += int64(examined)
	t.emitted += int64(emitted)
	t.emitSq += int64(emitted * emitted)
}

func merge(dst, src *tally) {
	for i, v := range src.pos {
		dst.pos[i] += v
	}
	for i, v := range src.joint {
		dst.joint[i] += v
	}
	if dst.kinds != nil {
		mergeKinds(dst, src)
	} else if dst.het != nil {
		dst.het.Merge(src.het)
	}
	dst.accepted += src.accepted
	dst.examined += src.examined
	dst.emitted += src.emitted
	dst.emitSq += src.emitSq
	dst.invalid += src.invalid
	if dst.pit != nil && dst.kinds == nil {
		dst.pit.merge(src.pit)
	}
	if dst.shift != nil {
		dst.shift.merge(src.shift)
	}
	if dst.hashed != nil {
		dst.hashed.merge(src.hashed)
	}
	for i, v := range src.fit {
		dst.fit[i] += v
	}
	dst.fitN += src.fitN
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

// lawCells is the number of cells of the law test: (accepted length a,
// bin k of the next token's PIT under the law given a), then one for "no
// next token" and one for outcomes the law gives probability zero.
func (rn *runner) lawCells() int { return (rn.w.g+1)*rn.lb + 2 }

// lawBlocks is the law test's cells as blocks of equal probability for
// stattest.Hetero.AddBlocks: the lb bins of each accepted length share its
// mass (the PIT of the next token under its own law is uniform), then
// "no next token" and the impossible cell, one cell each.
func (rn *runner) lawBlocks() []int {
	wd := make([]int, rn.w.g+3)
	for a := range wd {
		wd[a] = 1
		if a <= rn.w.g {
			wd[a] = rn.lb
		}
	}
	return wd
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
}

// reserveMem asks the check's memory account (Config.MemBudget) for what
// its run allocates with the input before anything is allocated (issue
// 30, H4 and H5): a tally (per-state position cells, the joint, the PIT
// tables, the law test's cells) per worker plus the merged total, and,
// for tree rules, each worker's batch of draft trees (up to
// min(MaxTreeNodes, 1 + K + … + K^γ) nodes, each holding its target and
// draft rows of V float64s).
func (rn *runner) reserveMem() error {
	w, acc := rn.w, sim.NewAccountant(rn.cfg.MemBudget)
	copies := int64(sim.Workers(rn.cfg.Workers)) + 1
	cells := int64(0)
	if rn.marg {
		p := rn.pit
		cells = int64(rn.posLen) + int64(rn.jLen) + int64(2*p.g1*p.bins+p.pairs()*p.pb*p.pb+p.pb*p.pb)
		cells += int64(2*rn.shift.pb*rn.shift.pb + rn.shift.half*(rn.shift.g1+1))
		if p.cb > 0 {
			cells += int64(pow(p.cb, p.g1))
		}
	}
	if rn.lawOn {
		cells += 3 * int64(rn.lawCells())
	}
	what := fmt.Sprintf("check: the tallies (%d position cells of %d states × %d tokens × %d positions, and the joint and PIT tables; one per worker and the total: %d)",
		rn.posLen, max(w.states, w.nc), w.v, w.g+1, copies)
	if err := acc.Reserve(what, sim.MulBytes(cells, 8, copies), talliesFix); err != nil {
		return err
	}
	if rn.marg {
		if err := rn.hashed.reserve(acc, copies, rn.cfg.Batch); err != nil {
			return err
		}
	}
	if !rn.rule.isTree() {
		return nil
	}
	trees := int64(1)
	if rn.rule.TreeSteps != nil {
		trees = int64(max(rn.cfg.Batch, 1))
	}
	nodes := treeNodes(rn.rule.Draft, rn.rule.K, rn.rule.Branch, w.g)
	what = fmt.Sprintf("check: the draft trees (a batch of %d trees of up to %d nodes × %d tokens per worker, %d workers)", trees, nodes, w.v, copies-1)
	return acc.Reserve(what, sim.MulBytes(TreeBatchBytes(trees, nodes, rn.rule.K, w.v), copies-1), TreeBatchFix)
}

// talliesFix is the advice of an error about the tallies' memory.
const talliesFix = "lower --gamma or the source's size (V, order, contexts), or use fewer --workers"

// ReserveStateTallies refuses, before a model pair of states Markov
// states over v tokens is built, a losslessness check whose per-state
// position cells alone, states·v·(γ+1) counts per worker and one total,
// exceed budget (0: sim.DefaultMemBudget). It is a lower bound of what
// reserveMem asks once the pair is built, so it never refuses a check that
// would fit; it spares building a pair whose check cannot run.
func ReserveStateTallies(states, v, gamma, workers int, budget int64) error {
	copies := int64(sim.Workers(workers)) + 1
	cells := sim.MulBytes(int64(states), int64(v), int64(gamma+1))
	what := fmt.Sprintf("check: the tallies (%d position cells of %d states × %d tokens × %d positions; one per worker and the total: %d)",
		cells, states, v, gamma+1, copies)
	return sim.NewAccountant(budget).Reserve(what, sim.MulBytes(cells, 8, copies), talliesFix)
}

// TreeBatchFix is the advice of an error about TreeBatchBytes.
const TreeBatchFix = "lower --batch, --k or --gamma"

// TreeBatchBytes is the memory a batch of b draft trees of up to nodes
// nodes with k candidates over V tokens takes in the harness: every node
// holds its target and draft rows of V float64s, and its children; -1 on
// overflow. An external check asks it before starting the implementation.
func TreeBatchBytes(b, nodes int64, k, v int) int64 {
	perNode := sim.MulBytes(int64(v), 16)
	if perNode >= 0 {
		perNode += 16*int64(max(k, 1)) + 128
	}
	return sim.MulBytes(b, nodes, perNode)
}

// treeNodes bounds a draft tree's nodes, as external.MaxTreeNodes does:
// with branch per depth (not i.i.d.) 1 + b₁ + b₁b₂ + …, else k chains of
// depth γ, 1 + k·γ; at most sim.MaxTreeNodes.
func treeNodes(kind sim.DraftKind, k int, branch []int, depth int) int64 {
	if len(branch) == 0 || kind == sim.DraftIID {
		return int64(min(1+max(k, 1)*depth, sim.MaxTreeNodes))
	}
	n, level := int64(1), int64(1)
	for _, b := range branch {
		level *= int64(max(b, 1))
		if n += level; n >= sim.MaxTreeNodes || level >= sim.MaxTreeNodes {
			return sim.MaxTreeNodes
		}
	}
	return n
}

func (rn *runner) newTally() *tally {
	t := &tally{prevTrial: -1, fit: make([]float64, len(rn.cfg.Candidates))}
	if rn.marg {
		t.pos = make([]int64, rn.posLen)
		t.joint = make([]int64, rn.jLen)
		t.pit = rn.pit.newCounts()
		t.prevU = make([]float64, rn.w.g+1)
		if rn.shift.half > 0 {
			t.shift = rn.shift.newCounts()
		}
		t.hashed = rn.hashed.newCounts()
	}
	if rn.lawOn {
		t.het = stattest.NewHetero(rn.lawCells())
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
	if rn.lawOn && r.Trial%rn.lawEvery == 0 && !rn.lawOff(r) {
		rn.rule.Law.Law(b, &sc.law)
		clear(sc.mass)
		for a := 0; a <= g; a++ {
			rn.addLawRow(sc.mass, a, sc.law.P[a*(w.v+1):(a+1)*(w.v+1)])
		}
		obs := rn.lawObs(o.Accepted, o.Next, sc.law.P[o.Accepted*(w.v+1):(o.Accepted+1)*(w.v+1)], r.Trial)
		t.het.AddBlocks(rn.lawWidths, sc.mass, obs)
	}
	if rn.marg {
		seq := append(sc.seq[:0], b.Tokens[:o.Accepted]...)
		if o.Next != sim.NoToken {
			seq = append(seq, o.Next)
		}
		rn.count(r, c, seq, t, bad)
	}
	return nil
}

// addLawRow adds the law row of an accepted length (or, for trees, of a
// node) at depth a — row[0] the mass of "no next token", row[1+t] that of
// next token t — into the law test's block masses (lawBlocks): the mass
// of its next tokens to depth a's block, whose lb PIT bins share it
// evenly since the PIT of the next token under its own conditional law is
// uniform.
func (rn *runner) addLawRow(mass []float64, a int, row []float64) {
	mass[rn.w.g+1] += row[0]
	mass[a] += floats.Sum(row[1:])
}

// lawObs returns the law test's cell of an observed outcome at depth a
// with next token tok, given the law row of its accepted length (or node):
// "no next token", the impossible cell where the law gives the outcome
// probability zero, else (a, bin of the next token's randomised PIT under
// row in token order, the randomisation a keyed hash of the trial).
func (rn *runner) lawObs(a, tok int, row []float64, trial int64) int {
	cells := rn.lawCells()
	if tok == sim.NoToken {
		if row[0] > 0 {
			return cells - 2
		}
		return cells - 1
	}
	row = row[1:]
	p := row[tok]
	if !(p > 0) {
		return cells - 1
	}
	before, m := 0.0, 0.0
	for t, x := range row {
		if t < tok {
			before += x
		}
		m += x
	}
	v := float64(sim.StreamID("check/lawpit", rn.cfg.Seed, uint64(trial))>>11) * 0x1p-53
	return a*rn.lb + bin(min((before+v*p)/m, 1), rn.lb)
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
	if rn.lawOn && r.Trial%rn.lawEvery == 0 && !rn.lawOff(r) {
		rn.rule.TreeLaw.TreeLaw(tree, &sc.tlaw)
		clear(sc.mass)
		for nd := range tree.Nodes {
			rn.addLawRow(sc.mass, tree.Nodes[nd].Depth, sc.tlaw.P[nd*(w.v+1):(nd+1)*(w.v+1)])
		}
		obs := rn.lawObs(depth, o.Next, sc.tlaw.P[o.Node*(w.v+1):(o.Node+1)*(w.v+1)], r.Trial)
		t.het.AddBlocks(rn.lawWidths, sc.mass, obs)
	}
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
			hashedPIT(&rn.hashed, t.hashed, i, r.Trial, tb.p, seq[i], v)
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
			hashedPIT(&rn.hashed, t.hashed, i, r.Trial, row, seq[i], v)
		}
		sc.u[byP][i], sc.u[byIdx][i] = a, b
	}
	sc.seq = seq
	rn.hashed.record(t.hashed, r.Trial, int(r.Trial-r.Unit*int64(rn.cfg.Batch)), c, seq)
	if bad {
		t.invalid++
	}
	rn.pit.add(t.pit, &sc.u)
	if rn.pit.cross {
		// rows 2k and 2k+1 of a unit: every position's pair of transforms
		j := r.Trial - r.Unit*int64(rn.cfg.Batch)
		if j%2 == 1 && t.prevTrial == r.Trial-1 {
			for i := 0; i <= g; i++ {
				rn.pit.addCross(t.pit, i, t.prevU[i], sc.u[byIdx][i])
			}
		}
		copy(t.prevU, sc.u[byIdx])
		t.prevTrial = r.Trial
	}
	if t.shift != nil {
		rn.shift.record(t.shift, int(r.Trial-r.Unit*int64(rn.cfg.Batch)), r.Trial, sc.u[byIdx])
	}
	if w.pool != nil {
		code := 0
		for i := 0; i <= g; i++ {
			b := int(w.binOf[w.poolIdx(c, i)*w.v+seq[i]])
			t.pos[w.poolIdx(c, i)*w.bins+b]++
			code = code*w.jb + b*w.jb/w.bins
		}
		t.joint[c*pow(w.jb, g+1)+code]++
		return
	}
	for i := 0; i <= g && w.states > 0; i++ {
		t.pos[(i*w.states+w.stateOf(seq[:i]))*w.v+seq[i]]++
	}
	if w.jointLen > 0 {
		code := 0
		for _, x := range seq[:w.jointLen] {
			code = code*w.v + x
		}
		t.joint[code]++
	}
}

// The candidates' fits: they cover the first steps of a check, as many as
// cost about fitCost row entries (each law is O((γ+1)V) a step) within
// [minFitSteps, maxFitSteps]; an impossible outcome counts fitFloor.
const (
	fitCost     = 5e8
	minFitSteps = 64
	maxFitSteps = 4096
)

var fitFloor = math.Log(1e-300)

// run executes the trials and returns the merged tally.
func (rn *runner) run(ctx context.Context, n int64) (*tally, int64, error) {
	rn.pit = newPITLayout(rn.w.g, n, rn.cfg.Seed, rn.cfg.CrossRow && rn.cfg.Batch >= 2)
	rn.shift = newShiftLayout(rn.pit.cross, rn.cfg.Batch, rn.pit.g1, rn.pit.pb)
	rn.hashed = newHashedLayout(rn.w.g, rn.w.v, rn.w.nc, n, rn.cfg.Seed, rn.pit.cross)
	rn.lawEvery = rn.cfg.LawEvery
	if rn.lawEvery == 0 {
		rn.lawEvery = 1
		if _, inProcess := rn.rule.Steps.(AlgorithmStepper); !rn.rule.Conform && (inProcess || rn.rule.Tree != nil) {
			rn.lawEvery = AutoLawEvery(rn.w.g, rn.w.v)
		}
	}
	rn.lb = lawTestBins(rn.w.g, (n+rn.lawEvery-1)/rn.lawEvery)
	rn.lawWidths = rn.lawBlocks()
	if nc := len(rn.cfg.Candidates); nc > 0 {
		rn.fitSteps = min(max(fitCost/(int64(rn.w.g+1)*int64(rn.w.v)*int64(nc)), minFitSteps), maxFitSteps)
	}
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
	opt := sim.MCOptions{Workers: rn.cfg.Workers, Progress: rn.cfg.Progress}
	tot, done, err := run.Rounds(ctx, n, rn.loop, opt, rn.newTally, rn.record, func(dst, src *tally) {
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
	if tot != nil {
		rn.poolKinds(tot)
	}
	return tot, done, err
}

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

// tests turns the merged tally into the pending tests: of every trial
// (kind -1), or of row kind kind's (the pool's contexts of that kind, and
// t holding the kind's PIT and law counts; no cross-row test).
func (rn *runner) tests(t *tally, kind int) ([]pending, error) {
	w, g := rn.w, rn.w.g
	var out []pending
	of := func(c int) bool { return kind < 0 || c%len(rn.cfg.RowKinds) == kind }
	// ctxOf maps a table's group (its contexts in order) to the context
	ctxOf := func(gr int) int {
		if kind < 0 {
			return gr
		}
		return gr*len(rn.cfg.RowKinds) + kind
	}
	ncs := 0
	for c := 0; c < w.nc; c++ {
		if of(c) {
			ncs++
		}
	}
	if rn.marg && w.pool != nil {
		// oneHot: every target row of the tested contexts has one token
		// (greedy row kinds); a table then has one possible cell per
		// group and tests that nothing impossible was emitted
		oneHot := true
		for i := 0; i <= g; i++ {
			tb := &stattest.Table{}
			for c := 0; c < w.nc; c++ {
				if !of(c) {
					continue
				}
				k := w.poolIdx(c, i) * w.bins
				if err := tb.Add(t.pos[k:k+w.bins], w.binP[k:k+w.bins]); err != nil {
					return nil, err
				}
				oneHot = oneHot && slices.IndexFunc(w.binP[k:k+w.bins], func(x float64) bool { return x > 0 && x < 1 }) < 0
			}
			out = append(out, pending{name: fmt.Sprintf("position %d", i+1), table: tb, oneHot: oneHot,
				quantity: fmt.Sprintf("TV between the emitted and target law of position %d, binned into %d equal-mass bins (sorted by p/q), averaged over %d contexts", i+1, w.bins, ncs),
				cell: func(c, b int) string {
					return fmt.Sprintf("position %d in context %d, bin %d of %d (tokens sorted by p/q, bin 1 the lowest)", i+1, ctxOf(c), b+1, w.bins)
				}})
		}
		tb := &stattest.Table{}
		cells := pow(w.jb, g+1)
		probs := make([]float64, cells)
		// coarse[i*jb+cb] is position i's mass in coarse bin cb, summed
		// once per context (it was summed again for each of the jb^(γ+1)
		// cells: 2 s at γ = 8, which delayed an interrupted check's
		// report past the Ctrl-C bound); same sums, same order
		coarse := make([]float64, (g+1)*w.jb)
		for c := 0; c < w.nc; c++ {
			if !of(c) {
				continue
			}
			clear(coarse)
			for i := 0; i <= g; i++ {
				base := w.poolIdx(c, i) * w.bins
				for b := 0; b < w.bins; b++ {
					coarse[i*w.jb+b*w.jb/w.bins] += w.binP[base+b]
				}
			}
			for code := range probs {
				pr, x := 1.0, code
				for i := g; i >= 0; i-- {
					pr *= coarse[i*w.jb+x%w.jb]
					x /= w.jb
				}
				probs[code] = pr
			}
			if err := tb.Add(t.joint[c*cells:(c+1)*cells], probs); err != nil {
				return nil, err
			}
		}
		out = append(out, pending{name: fmt.Sprintf("positions 1-%d jointly (dependence)", g+1), table: tb, oneHot: oneHot,
			quantity: fmt.Sprintf("TV between the emitted joint law of positions 1-%d, each binned into %d equal-mass bins, and the target product law, averaged over %d contexts", g+1, w.jb, ncs),
			cell: func(c, code int) string {
				return fmt.Sprintf("positions 1-%d in context %d, coarse bins %s of %d (by p/q)", g+1, ctxOf(c), digits(code, w.jb, g+1, 1), w.jb)
			}})
	}
	if rn.marg && w.pair != nil {
		for i := 0; i <= g && w.states > 0; i++ {
			tb := &stattest.Table{}
			for s := 0; s < w.states; s++ {
				k := (i*w.states + s) * w.v
				if err := tb.Add(t.pos[k:k+w.v], w.stateRow[s]); err != nil {
					return nil, err
				}
			}
			out = append(out, pending{name: fmt.Sprintf("position %d given its state", i+1), table: tb, oneHot: w.oneHot,
				quantity: fmt.Sprintf("TV between the emitted and target law of token %d given the target's state (the last order tokens), averaged over the visited states", i+1),
				cell:     func(s, x int) string { return fmt.Sprintf("position %d in target state %d, token %d", i+1, s, x) }})
		}
		if w.jointLen > 0 {
			tb := &stattest.Table{}
			if err := tb.Add(t.joint, seqLaw(w.target, w.v, w.jointLen)); err != nil {
				return nil, err
			}
			out = append(out, pending{name: fmt.Sprintf("first %d tokens (joint)", w.jointLen), table: tb, oneHot: w.oneHot,
				quantity: fmt.Sprintf("TV between the emitted and target joint law of the first %d tokens (sparse cells pooled)", w.jointLen),
				cell:     func(_, code int) string { return fmt.Sprintf("tokens %s", digits(code, w.v, w.jointLen, 0)) }})
		}
	}
	if rn.marg {
		pt, err := rn.pit.tests(t.pit)
		if err != nil {
			return nil, err
		}
		for _, p := range pt {
			if kind < 0 || !p.independence {
				out = append(out, p)
			}
		}
		if kind < 0 && t.shift != nil {
			out = append(out, rn.shift.tests(t.shift)...)
		}
		if kind < 0 {
			ht, err := rn.hashed.tests(t.hashed)
			if err != nil {
				return nil, err
			}
			out = append(out, ht...)
		}
	}
	if rn.lawOn && t.het != nil {
		h := t.het.Test(stattest.DefaultMinExpected)
		name, what := "sampler vs own law", "the rule's own exact law"
		if rn.rule.Conform {
			name, what = "conformance to "+rn.rule.LawName, rn.rule.LawName+"'s exact law"
		}
		lb, cells := rn.lb, rn.lawCells()
		steps := "each step's"
		if rn.lawEvery > 1 {
			steps = fmt.Sprintf("every %s step's", ordinal(rn.lawEvery))
		}
		out = append(out, pending{name: name, het: &h, hetero: t.het,
			quantity: fmt.Sprintf("TV between the step-averaged outcome law and %s given %s drafts, on cells (accepted length, %d equal-mass bins of the next token's PIT under that law)", what, steps, rn.lb),
			cell: func(_, c int) string {
				switch c {
				case cells - 2:
					return "no next token"
				case cells - 1:
					return "outcomes the law makes impossible"
				}
				return fmt.Sprintf("accepted length %d, next token's PIT bin %d of %d under the law", c/lb, c%lb+1, lb)
			}})
	}
	return out, nil
}

// seqLaw returns the target law of the first l tokens from the empty
// context, indexed base-v with the first token most significant.
func seqLaw(m sim.Model, v, l int) []float64 {
	law := []float64{1}
	row := make([]float64, v)
	seq := make([]int, 0, l)
	for d := 0; d < l; d++ {
		next := make([]float64, len(law)*v)
		for code, w := range law {
			if w == 0 {
				continue
			}
			seq = seq[:d]
			for j, c := d-1, code; j >= 0; j-- {
				seq[j] = c % v
				c /= v
			}
			m.Next(seq, row)
			for t, pt := range row {
				next[code*v+t] = w * pt
			}
		}
		law = next
	}
	return law
}

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
