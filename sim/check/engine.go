package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
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
	// Edge, if set, is driven by EdgeCheck and enters the verdict.
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
	bins     int
	binOf    []uint16
	lawBinOf []uint8
	binP     []float64
	pAlias   []*sim.Alias
	jb       int
	// pairs: target states (the last `order` tokens), their rows, the law
	// bins of each state's tokens, and the full joint when it fits.
	states   int
	stateOf  func([]int) int
	stateRow [][]float64
	stateBin [][]uint8
	oneHot   bool
	jointLen int
	// positional models of each pool context (tree rules).
	posP, posQ []sim.Model
}

func (w *world) poolIdx(c, i int) int { return c*(w.g+1) + i }

// lawBin returns the law-test bin of token tok at position i after prefix
// in context c.
func (w *world) lawBin(c int, prefix []int, i, tok int) int {
	return int(w.lawBinsAt(c, prefix, i)[tok])
}

// lawBinsAt returns the law-test bins of every token at position i after
// prefix in context c.
func (w *world) lawBinsAt(c int, prefix []int, i int) []uint8 {
	if w.pool != nil {
		k := w.poolIdx(c, i) * w.v
		return w.lawBinOf[k : k+w.v]
	}
	return w.stateBin[w.stateOf(prefix)]
}

// addLawRow adds row (Pr(Next = t) for t = NoToken, 0, ..., V-1 at
// accepted length a) into the law test's cells.
func (w *world) addLawRow(cells []float64, c int, prefix []int, a int, row []float64) {
	if row[0] > 0 {
		cells[len(cells)-1] += row[0]
	}
	bins := w.lawBinsAt(c, prefix, a)
	dst := cells[a*lawBins : (a+1)*lawBins]
	for t, p := range row[1:] {
		if p > 0 {
			dst[bins[t]] += p
		}
	}
}

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
	w.lawBinOf = make([]uint8, len(w.binOf))
	for i, b := range w.binOf {
		w.lawBinOf[i] = uint8(int(b) * lawBins / bins)
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

// markovOf returns the Markov chain under m (through Greedy), or nil.
func markovOf(m sim.Model) *sim.Markov {
	switch t := m.(type) {
	case *sim.Markov:
		return t
	case sim.Greedy:
		return markovOf(t.M)
	}
	return nil
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
	switch mk := markovOf(pr.P); {
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
		if _, ok := pr.P.(sim.Fixed); !ok {
			return nil, fmt.Errorf("check: model pair %s: the per-position tests need a Markov or context-free target", pr.Name)
		}
		w.states, w.stateOf = 1, func([]int) int { return 0 }
		reps = [][]int{nil}
	}
	q := make([]float64, v)
	order := make([]int, v)
	for _, rep := range reps {
		row := make([]float64, v)
		w.target.Next(rep, row)
		pr.Q.Next(rep, q)
		w.stateRow = append(w.stateRow, row)
		for x := range order {
			order[x] = x
		}
		key := func(x int) float64 {
			if q[x] > 0 {
				return row[x] / q[x]
			}
			return math.Inf(1)
		}
		sort.SliceStable(order, func(a, b int) bool { return key(order[a]) < key(order[b]) })
		bin := make([]uint8, v)
		cum := 0.0
		for _, x := range order {
			bin[x] = uint8(min(int(cum*lawBins), lawBins-1))
			cum += row[x]
		}
		w.stateBin = append(w.stateBin, bin)
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
	sc         *scratch
}

// scratch is the per-chunk working storage of the recorder (not merged).
type scratch struct {
	seq   []int
	row   []float64
	law   sim.Law
	cells []float64
	tlaw  sim.TreeLaw
	path  []int
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
	if dst.het != nil {
		dst.het.Merge(src.het)
	}
	dst.accepted += src.accepted
	dst.examined += src.examined
	dst.emitted += src.emitted
	dst.emitSq += src.emitSq
	dst.invalid += src.invalid
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

// lawCells is the number of cells of the law test: (accepted length n,
// bin of the next token) plus one for "no next token".
func (w *world) lawCells() int { return (w.g+1)*lawBins + 1 }

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
}

func (rn *runner) newTally() *tally {
	t := &tally{}
	if rn.marg {
		t.pos = make([]int64, rn.posLen)
		t.joint = make([]int64, rn.jLen)
	}
	if rn.lawOn {
		t.het = stattest.NewHetero(rn.w.lawCells())
	}
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
	return &scratch{cells: make([]float64, w.lawCells()), seq: make([]int, 0, w.g+2), row: make([]float64, w.v)}
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
		d, err := r.Drafter(q, w.g)
		if err != nil {
			return nil, err
		}
		ds[i] = d
	}
	l.Trees = run.CycleTrees(ds, ps)
	return l, nil
}

// record checks and counts one round.
func (rn *runner) record(t *tally, r *run.Round) error {
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
		// its error; one of draft probability 0 cannot have been drawn
		// from q, an invalid outcome.
		for i, x := range b.Tokens {
			if x < 0 || x >= w.v {
				return fmt.Errorf("step %d: draft token %d at position %d is outside the vocabulary [0, %d)", r.Trial, x, i, w.v)
			}
			bad = bad || b.Q[i].At(x) <= 0
		}
	}
	if sim.CheckOutcome(b, o) != nil {
		bad = true
		o = sim.Outcome{Accepted: min(max(o.Accepted, 0), w.g), Next: sim.NoToken}
	}
	if rn.marg && !bad {
		// No lossless rule emits a token of target probability 0.
		for i, x := range b.Tokens[:o.Accepted] {
			bad = bad || b.P[i].At(x) <= 0
		}
		bad = bad || (o.Next != sim.NoToken && b.P[o.Accepted].At(o.Next) <= 0)
	}
	if bad {
		t.invalid++
	}
	g := w.g
	t.record(o.Accepted, min(o.Accepted+1, g), o.Emitted())
	if rn.lawOn {
		rn.rule.Law.Law(b, &sc.law)
		clear(sc.cells)
		for a := 0; a <= g; a++ {
			w.addLawRow(sc.cells, c, b.Tokens[:a], a, sc.law.P[a*(w.v+1):(a+1)*(w.v+1)])
		}
		t.het.Add(sc.cells, rn.lawCell(c, b.Tokens[:o.Accepted], o.Accepted, o.Next))
	}
	if rn.marg {
		seq := append(sc.seq[:0], b.Tokens[:o.Accepted]...)
		if o.Next != sim.NoToken {
			seq = append(seq, o.Next)
		}
		rn.count(c, seq, r.Rand(run.Continuation), t)
	}
	return nil
}

func (rn *runner) lawCell(c int, prefix []int, a, tok int) int {
	if tok == sim.NoToken {
		return rn.w.lawCells() - 1
	}
	return a*lawBins + rn.w.lawBin(c, prefix, a, tok)
}

// recordTree checks and counts one tree round.
func (rn *runner) recordTree(t *tally, r *run.Round) error {
	w, sc, tree := rn.w, t.sc, r.Tree
	c := 0
	if w.pool != nil {
		c = int(r.Trial % int64(w.nc))
	}
	rc := r.Rand(run.Continuation)
	o := r.TreeOutcome()
	if o.Node < 0 || o.Node >= len(tree.Nodes) || (o.Next != sim.NoToken && (o.Next < 0 || o.Next >= w.v)) {
		t.invalid++
		o = sim.TreeOutcome{Node: 0, Next: sim.NoToken}
	}
	depth := tree.Nodes[o.Node].Depth
	emitted := depth
	if o.Next != sim.NoToken {
		emitted++
	}
	t.record(depth, min(depth+1, w.g), emitted)
	if rn.lawOn {
		rn.rule.TreeLaw.TreeLaw(tree, &sc.tlaw)
		clear(sc.cells)
		for nd := range tree.Nodes {
			sc.path = tree.Path(sc.path[:0], nd)
			w.addLawRow(sc.cells, c, sc.path, len(sc.path), sc.tlaw.P[nd*(w.v+1):(nd+1)*(w.v+1)])
		}
		sc.path = tree.Path(sc.path[:0], o.Node)
		t.het.Add(sc.cells, rn.lawCell(c, sc.path, depth, o.Next))
	}
	if rn.marg {
		seq := tree.Path(sc.seq[:0], o.Node)
		if o.Next != sim.NoToken {
			seq = append(seq, o.Next)
		}
		rn.count(c, seq, rc, t)
	}
	return nil
}

// count continues seq with the target to γ+1 tokens and counts its cells.
func (rn *runner) count(c int, seq []int, rc *rand.Rand, t *tally) {
	w, g := rn.w, rn.w.g
	if len(seq) > g+1 {
		seq = seq[:g+1]
	}
	for len(seq) <= g {
		if w.pool != nil {
			seq = append(seq, w.pAlias[w.poolIdx(c, len(seq))].Sample(rc))
		} else {
			w.target.Next(seq, t.sc.row)
			seq = append(seq, sim.SampleCDF(rc.Float64(), t.sc.row))
		}
	}
	t.sc.seq = seq
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
	for i := 0; i <= g; i++ {
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

// run executes the trials and returns the merged tally.
func (rn *runner) run(ctx context.Context, n int64) (*tally, int64, error) {
	if rn.loop == nil {
		l, err := rn.newLoop()
		if err != nil {
			return nil, 0, err
		}
		rn.loop = l
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
	return tot, done, err
}

// tests turns the merged tally into the pending tests.
func (rn *runner) tests(t *tally) ([]pending, error) {
	w, g := rn.w, rn.w.g
	var out []pending
	if rn.marg && w.pool != nil {
		for i := 0; i <= g; i++ {
			tb := &stattest.Table{}
			for c := 0; c < w.nc; c++ {
				k := w.poolIdx(c, i) * w.bins
				if err := tb.Add(t.pos[k:k+w.bins], w.binP[k:k+w.bins]); err != nil {
					return nil, err
				}
			}
			out = append(out, pending{name: fmt.Sprintf("position %d", i+1), table: tb,
				quantity: fmt.Sprintf("TV between the emitted and target law of position %d, binned into %d equal-mass bins (sorted by p/q), averaged over %d contexts", i+1, w.bins, w.nc)})
		}
		tb := &stattest.Table{}
		cells := pow(w.jb, g+1)
		probs := make([]float64, cells)
		for c := 0; c < w.nc; c++ {
			for code := range probs {
				pr, x := 1.0, code
				for i := g; i >= 0; i-- {
					cb := x % w.jb
					x /= w.jb
					m := 0.0
					base := w.poolIdx(c, i) * w.bins
					for b := 0; b < w.bins; b++ {
						if b*w.jb/w.bins == cb {
							m += w.binP[base+b]
						}
					}
					pr *= m
				}
				probs[code] = pr
			}
			if err := tb.Add(t.joint[c*cells:(c+1)*cells], probs); err != nil {
				return nil, err
			}
		}
		out = append(out, pending{name: fmt.Sprintf("positions 1-%d jointly (dependence)", g+1), table: tb,
			quantity: fmt.Sprintf("TV between the emitted joint law of positions 1-%d, each binned into %d equal-mass bins, and the target product law, averaged over %d contexts", g+1, w.jb, w.nc)})
	}
	if rn.marg && w.pair != nil {
		for i := 0; i <= g; i++ {
			tb := &stattest.Table{}
			for s := 0; s < w.states; s++ {
				k := (i*w.states + s) * w.v
				if err := tb.Add(t.pos[k:k+w.v], w.stateRow[s]); err != nil {
					return nil, err
				}
			}
			out = append(out, pending{name: fmt.Sprintf("position %d given its state", i+1), table: tb, oneHot: w.oneHot,
				quantity: fmt.Sprintf("TV between the emitted and target law of token %d given the target's state (the last order tokens), averaged over the visited states", i+1)})
		}
		if w.jointLen > 0 {
			tb := &stattest.Table{}
			if err := tb.Add(t.joint, seqLaw(w.target, w.v, w.jointLen)); err != nil {
				return nil, err
			}
			out = append(out, pending{name: fmt.Sprintf("first %d tokens (joint)", w.jointLen), table: tb, oneHot: w.oneHot,
				quantity: fmt.Sprintf("TV between the emitted and target joint law of the first %d tokens (sparse cells pooled)", w.jointLen)})
		}
	}
	if rn.lawOn {
		h := t.het.Test(stattest.DefaultMinExpected)
		name, what := "sampler vs own law", "the rule's own exact law"
		if rn.rule.Conform {
			name, what = "conformance to "+rn.rule.LawName, rn.rule.LawName+"'s exact law"
		}
		out = append(out, pending{name: name, het: &h,
			quantity: fmt.Sprintf("TV between the step-averaged outcome law and %s given each step's drafts, on cells (accepted length, next-token bin of %d equal-mass bins)", what, lawBins)})
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
