package run

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// A ChainDrafter fills dst with round r's draft chain and the rows a
// verifier needs (Tokens, Q, P, Ctx), drawing from r.Rand(Source) and
// r.Rand(Draft). It may reuse dst's storage; it is called from one
// goroutine per Worker, so any state it keeps must be per Worker or safe
// for concurrent use.
type ChainDrafter interface {
	DraftChain(r *Round, dst *sim.Block) error
}

// A TreeDrafter fills dst (= r.Tree) with round r's draft tree, its target
// rows included, or points r.Tree at a tree of its own (a pre-drafted
// one, which the verifiers then read in place).
type TreeDrafter interface {
	DraftTree(r *Round, dst *sim.Tree) error
}

// Verifier is one rule a Loop runs on every round: exactly one of its
// fields is set (use Chain, Tree or Batch).
type Verifier struct {
	// Chain decides a chain round.
	Chain sim.Algorithm
	// Tree decides a tree round.
	Tree sim.TreeAlgorithm
	// Batch decides all chain rounds of a unit in one call (an external
	// implementation answers a batch per round trip).
	Batch sim.Stepper
	// BatchTree decides all tree rounds of a unit in one call.
	BatchTree sim.TreeStepper
}

// Chain returns the verifier of chain rule a.
func Chain(a sim.Algorithm) Verifier { return Verifier{Chain: a} }

// Tree returns the verifier of tree rule a.
func Tree(a sim.TreeAlgorithm) Verifier { return Verifier{Tree: a} }

// Batch returns the verifier of batch stepper s.
func Batch(s sim.Stepper) Verifier { return Verifier{Batch: s} }

// BatchTree returns the verifier of batch tree stepper s.
func BatchTree(s sim.TreeStepper) Verifier { return Verifier{BatchTree: s} }

// tree reports whether v verifies trees.
func (v Verifier) tree() bool { return v.Tree != nil || v.BatchTree != nil }

// Loop describes the rounds of a run: how they are drafted, who verifies
// them, and the streams they draw from.
type Loop struct {
	// Seed is the master seed and Keys the stream ids of each role and
	// unit (Named(name) for the harness's naming).
	Seed uint64
	Keys Keys
	// Batch is the number of rounds per unit (0 means 1). The rounds of a
	// unit draw from the unit's streams in order; a Batch verifier gets
	// them in one call.
	Batch int
	// Exactly one of Chains and Trees drafts the rounds.
	Chains ChainDrafter
	Trees  TreeDrafter
	// Verifiers decide every round in order, each on the same draft with
	// the Coins stream started afresh (common random numbers). Chain and
	// Batch verifiers need Chains, Tree verifiers Trees.
	Verifiers []Verifier
}

// Round is one speculative step as the recorder sees it. The recorder must
// not keep it (or its Block or Tree) beyond the call.
type Round struct {
	// Unit is the round's unit and Trial its index in the run.
	Unit, Trial int64
	// Block is the draft chain (chain rounds) and Tree the draft tree
	// (tree rounds).
	Block *sim.Block
	Tree  *sim.Tree
	// Outcomes[i] is the outcome of Loop.Verifiers[i] (chain rounds);
	// TreeOutcomes[i] likewise for tree rounds.
	Outcomes     []sim.Outcome
	TreeOutcomes []sim.TreeOutcome

	streams *Streams
}

// Rand returns the generator of role r for this round's unit.
func (r *Round) Rand(role Role) *rand.Rand { return r.streams.Rand(role) }

// Outcome returns the outcome of the first verifier (chain rounds).
func (r *Round) Outcome() sim.Outcome { return r.Outcomes[0] }

// TreeOutcome returns the outcome of the first verifier (tree rounds).
func (r *Round) TreeOutcome() sim.TreeOutcome { return r.TreeOutcomes[0] }

// check validates the loop's shape.
func (l *Loop) check() error {
	if (l.Chains == nil) == (l.Trees == nil) {
		return errors.New("run: a loop needs exactly one of a chain drafter and a tree drafter")
	}
	if l.Batch < 0 {
		return fmt.Errorf("run: batch = %d; use 1 or more rounds per unit", l.Batch)
	}
	if l.Keys.f == nil {
		return errors.New("run: a loop needs stream keys (run.Named(name))")
	}
	for i, v := range l.Verifiers {
		n := 0
		for _, set := range []bool{v.Chain != nil, v.Tree != nil, v.Batch != nil, v.BatchTree != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("run: verifier %d sets %d of Chain, Tree, Batch and BatchTree; set exactly one", i, n)
		}
		if v.tree() != (l.Trees != nil) {
			return fmt.Errorf("run: verifier %d does not fit the loop's drafter (chain rules verify chains, tree rules trees)", i)
		}
	}
	return nil
}

func (l *Loop) batch() int { return max(l.Batch, 1) }

// Worker runs the rounds of a Loop one unit (or one round) at a time. It
// owns the rounds' storage, which it reuses, so a worker does not allocate
// once warm. A Worker is not safe for concurrent use; use one per
// goroutine.
type Worker struct {
	l       *Loop
	streams *Streams
	blocks  []sim.Block
	trees   []sim.Tree
	outs    [][]sim.Outcome // per verifier, per round of the unit
	tptrs   []*sim.Tree     // the trees the verifiers read (slot or drafter's own)
	touts   [][]sim.TreeOutcome
	round   Round
}

// NewWorker checks l and returns a worker for it.
func (l *Loop) NewWorker() (*Worker, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	w := &Worker{l: l, streams: NewStreams(l.Seed, l.Keys)}
	b, nv := l.batch(), len(l.Verifiers)
	if !w.hasBatch() {
		b = 1 // rounds are drafted, verified and recorded one at a time
	}
	if l.Chains != nil {
		w.blocks = make([]sim.Block, b)
		w.outs = make([][]sim.Outcome, nv)
		for i := range w.outs {
			w.outs[i] = make([]sim.Outcome, b)
		}
	} else {
		w.trees = make([]sim.Tree, b)
		w.tptrs = make([]*sim.Tree, b)
		w.touts = make([][]sim.TreeOutcome, nv)
		for i := range w.touts {
			w.touts[i] = make([]sim.TreeOutcome, b)
		}
	}
	w.round.Outcomes = make([]sim.Outcome, nv)
	w.round.TreeOutcomes = make([]sim.TreeOutcome, nv)
	return w, nil
}

// Unit runs the rounds of unit u, trials [u·Batch, min((u+1)·Batch, n)),
// on the unit's keyed streams and calls rec with each round in order.
// With a batch verifier (Batch, BatchTree) every round of the unit is
// drafted first, then the verifiers decide them, then each is recorded;
// otherwise each round is drafted, verified and recorded in turn. Each
// stream is used by one stage only, so both orders draw the same numbers.
func (w *Worker) Unit(u, n int64, rec func(*Round) error) error {
	b := int64(w.l.batch())
	lo, hi := u*b, min((u+1)*b, n)
	w.streams.Reset(uint64(u))
	if !w.hasBatch() {
		for t := lo; t < hi; t++ {
			r, err := w.one(w.streams, u, t)
			if err != nil {
				return err
			}
			if err := rec(r); err != nil {
				return err
			}
		}
		return nil
	}
	m := int(hi - lo)
	r := &w.round
	r.streams, r.Unit = w.streams, u
	for j := 0; j < m; j++ {
		if err := w.draft(r, lo+int64(j), j); err != nil {
			return err
		}
	}
	if err := w.verify(m); err != nil {
		return fmt.Errorf("steps %d..%d: %w", lo, hi-1, err)
	}
	for j := 0; j < m; j++ {
		w.view(r, lo+int64(j), j)
		if err := rec(r); err != nil {
			return err
		}
	}
	return nil
}

// Round drafts and verifies one round numbered trial on the streams s as
// they stand (they are not reset), for loops that draw a sequence of
// rounds from one generator (Shared). The round is valid until the next
// call.
func (w *Worker) Round(s *Streams, trial int64) (*Round, error) {
	return w.one(s, trial, trial)
}

func (w *Worker) hasBatch() bool {
	for _, v := range w.l.Verifiers {
		if v.Batch != nil || v.BatchTree != nil {
			return true
		}
	}
	return false
}

// one drafts and verifies a single round into slot 0.
func (w *Worker) one(s *Streams, u, t int64) (*Round, error) {
	r := &w.round
	r.streams, r.Unit = s, u
	if err := w.draft(r, t, 0); err != nil {
		return nil, err
	}
	if err := w.verify(1); err != nil {
		return nil, err
	}
	w.view(r, t, 0)
	return r, nil
}

// draft drafts round t into slot j.
func (w *Worker) draft(r *Round, t int64, j int) error {
	r.Trial = t
	if w.l.Trees != nil {
		r.Block, r.Tree = nil, &w.trees[j]
		if err := w.l.Trees.DraftTree(r, r.Tree); err != nil {
			return err
		}
		w.tptrs[j] = r.Tree // the drafter may point at a tree of its own
		return nil
	}
	r.Tree, r.Block = nil, &w.blocks[j]
	return w.l.Chains.DraftChain(r, r.Block)
}

// verify runs every verifier on the first m rounds' drafts.
func (w *Worker) verify(m int) error {
	if w.l.Trees != nil {
		return w.verifyTrees(m)
	}
	return w.verifyChains(m)
}

// view points r at slot j's draft and outcomes as round t.
func (w *Worker) view(r *Round, t int64, j int) {
	r.Trial = t
	if w.l.Trees != nil {
		r.Block, r.Tree = nil, w.tptrs[j]
		for i := range w.l.Verifiers {
			r.TreeOutcomes[i] = w.touts[i][j]
		}
		return
	}
	r.Tree, r.Block = nil, &w.blocks[j]
	for i := range w.l.Verifiers {
		r.Outcomes[i] = w.outs[i][j]
	}
}

// verifyTrees runs every verifier on the first m trees.
func (w *Worker) verifyTrees(m int) error {
	s := w.round.streams
	for i, v := range w.l.Verifiers {
		rng := s.coins(i)
		if v.BatchTree != nil {
			if err := v.BatchTree.TreeSteps(rng, w.tptrs[:m], w.touts[i][:m]); err != nil {
				return err
			}
			continue
		}
		for j := 0; j < m; j++ {
			w.touts[i][j] = v.Tree.AcceptTree(rng, w.tptrs[j])
		}
	}
	return nil
}

// verifyChains runs every verifier on the first m blocks.
func (w *Worker) verifyChains(m int) error {
	s := w.round.streams
	for i, v := range w.l.Verifiers {
		rng := s.coins(i)
		if v.Batch != nil {
			if err := v.Batch.Steps(rng, w.blocks[:m], w.outs[i][:m]); err != nil {
				return err
			}
			continue
		}
		for j := 0; j < m; j++ {
			w.outs[i][j] = v.Chain.Accept(rng, &w.blocks[j])
		}
	}
	return nil
}
