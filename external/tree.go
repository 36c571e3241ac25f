package external

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
)

// treeBufs is the storage of tree batches, reused.
type treeBufs struct {
	parent, token, draws, nodes, prow, qrow []int64
	tabP, tabQ                              []float32
}

// TreeBytes returns the bytes of one tree batch's rows sent inline: b
// trees of up to n nodes, a float32 target and draft row of V entries per
// node (b·n·V·8). Pool and Markov sources send row indices instead.
func TreeBytes(b, n, v int) int64 {
	return sim.MulBytes(int64(b), int64(n), int64(v), 8)
}

// TreeSteps implements sim.TreeStepper (tree mode): one batch of trees,
// one round trip. The batch's seed is rng.Uint64().
func (im *Impl) TreeSteps(rng *rand.Rand, ts []*sim.Tree, outs []sim.TreeOutcome) error {
	return im.treeSteps(batchOpts{seed: rng.Uint64(), coins: coinsRandom, record: true}, ts, outs)
}

// treeKinds returns the row kinds, tree depths and seeds of a tree batch
// (kind -1, the run's depth and no seed outside a composed run; o.seeds,
// when set, replaces the seeds).
func (im *Impl) treeKinds(o batchOpts, ts []*sim.Tree) (kinds []int, gammas, seeds []int64) {
	return im.rowKinds(o, len(ts), func(i int) *sim.Block { return &sim.Block{Ctx: ts[i].Ctx} })
}

// rowKinds returns the row kind, draft length (tree depth) and seed of
// each of the n rows of a batch, row i's block (its context) given by
// block: kind -1, the run's γ and no seed outside a composed run; o.seeds,
// when set, replaces the seeds.
func (im *Impl) rowKinds(o batchOpts, n int, block func(i int) *sim.Block) (kinds []int, gammas, seeds []int64) {
	g := im.cfg.Gamma
	kinds, gammas, seeds = make([]int, n), make([]int64, n), make([]int64, n)
	for i := range n {
		kinds[i], _ = im.kindOf(block(i))
		gammas[i], seeds[i] = int64(g), -1
		if kinds[i] >= 0 {
			c := im.cfg.Rows[kinds[i]]
			gammas[i] = int64(c.gammaOf(g))
			if c.Seeded {
				seeds[i] = rowSeed(o.seed, i)
			}
		}
		if o.seeds != nil {
			seeds[i] = o.seeds[i]
		}
	}
	return kinds, gammas, seeds
}

func (im *Impl) treeSteps(o batchOpts, ts []*sim.Tree, outs []sim.TreeOutcome) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.err != nil {
		return im.err
	}
	if im.cfg.Mode != Tree {
		panic("external: trees sent to an implementation in " + im.cfg.Mode + " mode")
	}
	b := len(ts)
	k, first, where := im.next(b)
	if b == 0 {
		return nil
	}
	n, kd, rows := im.treeLayout(ts)
	if rows == "inline" {
		if err := sim.CheckMem(treeWhat(b, n, im.cfg.V), TreeBytes(b, n, im.cfg.V), im.cfg.MemBudget, "lower the batch size"); err != nil {
			return im.fail(fmt.Errorf("external: %s: %s: %w", im.name, where, err))
		}
	}
	kinds, gammas, seeds := im.treeKinds(o, ts)
	im.fillTrees(ts, n, kd, rows)
	h := header{Op: "batch", Batch: k, First: first, Size: b, Seed: o.seed, Coins: o.coins, Rows: rows,
		Arrays: []string{"parent", "token", "draws", "nodes", "prow", "qrow"}}
	if rows == "inline" {
		h.Arrays = append(h.Arrays, "p", "q")
	}
	h.Arrays = append(h.Arrays, perRowArrays(im.cfg.Rows)...)
	err := im.p.send(h, func(w io.Writer) error {
		if err := im.writeTrees(w, b, n, kd, rows == "inline"); err != nil {
			return err
		}
		if len(im.cfg.Rows) > 0 {
			return im.writePerRow(w, kinds, gammas, seeds)
		}
		return nil
	})
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	return im.readTrees(o, ts, outs, k, first, where, seeds)
}

// treeLayout returns a tree batch's widest tree n (nodes), most draws of
// a node kd, and how its rows travel: "pool" (every tree in a context of
// the implementation's pool), "markov" or "inline".
func (im *Impl) treeLayout(ts []*sim.Tree) (n, kd int, rows string) {
	n, kd = 1, 1
	pooled := im.pool != nil
	for _, t := range ts {
		if t.V != im.cfg.V {
			panic(fmt.Sprintf("external: a tree over V = %d; the implementation was started with V = %d", t.V, im.cfg.V))
		}
		n = max(n, len(t.Nodes))
		for j := range t.Nodes {
			kd = max(kd, len(t.Nodes[j].Draws))
		}
		if _, c := im.kindOf(&sim.Block{Ctx: t.Ctx}); c < 0 || c >= contexts(im.pool) {
			pooled = false
		}
	}
	switch {
	case pooled:
		return n, kd, "pool"
	case im.mp != nil:
		return n, kd, "markov"
	}
	return n, kd, "inline"
}

// fillTrees writes the trees' arrays into im.tb: b trees padded to n
// nodes of kd draws, rows by index (pool, markov) or inline.
func (im *Impl) fillTrees(ts []*sim.Tree, n, kd int, rows string) {
	b, g, v := len(ts), im.cfg.Gamma, im.cfg.V
	tb := &im.tb
	fill := func(s []int64, m int) []int64 {
		s = s[:0]
		for range m {
			s = append(s, -1)
		}
		return s
	}
	tb.parent, tb.token, tb.prow, tb.qrow = fill(tb.parent, b*n), fill(tb.token, b*n), fill(tb.prow, b*n), fill(tb.qrow, b*n)
	tb.draws, tb.nodes = fill(tb.draws, b*n*kd), tb.nodes[:0]
	if rows == "inline" {
		tb.tabP, tb.tabQ = growF32(tb.tabP, b*n*v), growF32(tb.tabQ, b*n*v)
	}
	for i, t := range ts {
		_, ctx := im.kindOf(&sim.Block{Ctx: t.Ctx})
		tb.nodes = append(tb.nodes, int64(len(t.Nodes)))
		for j := range t.Nodes {
			nd := &t.Nodes[j]
			at := i*n + j
			tb.parent[at], tb.token[at] = int64(nd.Parent), int64(nd.Token)
			if j == 0 {
				tb.token[at] = -1
			}
			for d, c := range nd.Draws {
				tb.draws[at*kd+d] = int64(c)
			}
			hasQ := !nd.Q.IsZero()
			switch rows {
			case "pool":
				tb.prow[at] = int64(ctx*(g+1) + min(nd.Depth, g))
				if hasQ {
					tb.qrow[at] = int64(ctx*g + min(nd.Depth, g-1))
				}
			case "markov":
				im.path = t.Path(im.path[:0], j)
				tb.prow[at] = int64(im.mp.State(im.path))
				if hasQ {
					tb.qrow[at] = int64(im.mq.State(im.path))
				}
			default:
				tb.prow[at] = int64(at)
				copyRow(tb.tabP[at*v:(at+1)*v], nd.P)
				if hasQ {
					tb.qrow[at] = int64(at)
					copyRow(tb.tabQ[at*v:(at+1)*v], nd.Q)
				}
			}
		}
		if rows == "inline" {
			clear(tb.tabP[(i*n+len(t.Nodes))*v : (i+1)*n*v])
			clear(tb.tabQ[(i*n+len(t.Nodes))*v : (i+1)*n*v])
		}
	}
}

// writeTrees writes im.tb's arrays of b trees of n nodes and kd draws
// (and their inline rows).
func (im *Impl) writeTrees(w io.Writer, b, n, kd int, inline bool) error {
	tb := &im.tb
	var err error
	for _, a := range []struct {
		x     []int64
		shape []int
	}{{tb.parent, []int{b, n}}, {tb.token, []int{b, n}}, {tb.draws, []int{b, n, kd}}, {tb.nodes, []int{b}}, {tb.prow, []int{b, n}}, {tb.qrow, []int{b, n}}} {
		if im.scratch, err = writeI64(w, a.shape, a.x, im.scratch); err != nil {
			return err
		}
	}
	if inline {
		for _, x := range [][]float32{tb.tabP, tb.tabQ} {
			if im.scratch, err = writeF32(w, []int{b * n, im.cfg.V}, x, im.scratch); err != nil {
				return err
			}
		}
	}
	return nil
}

// readTrees reads the answer to tree batch k (its first step first) and
// decodes each tree's emitted row into outs; seeded trees (seeds >= 0)
// are kept for the determinism replay when o.record is set.
func (im *Impl) readTrees(o batchOpts, ts []*sim.Tree, outs []sim.TreeOutcome, k int, first int64, where string, seeds []int64) error {
	b, g, v := len(ts), im.cfg.Gamma, im.cfg.V
	rh, err := im.p.recv([]string{"emitted"}, []*array{&im.emitted}, []int{b, g + 1})
	if err == nil && (rh.Op != "result" || rh.Batch != k) {
		err = fmt.Errorf("the answer is %q for batch %d, want \"result\" for batch %d", rh.Op, rh.Batch, k)
	}
	if err == nil {
		err = checkShape("emitted", &im.emitted, b, g+1)
	}
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	for i, t := range ts {
		row := im.emitted.I64[i*(g+1) : (i+1)*(g+1)]
		out, inv, err := decodeTree(t, row, v)
		if err != nil {
			return im.fail(fmt.Errorf("external: %s: %s, step %d (row %d): %v", im.name, where, first+int64(i), i, err))
		}
		if inv != "" {
			im.invalid.add(inv, fmt.Sprintf("%s, step %d (row %d): emitted %v", where, first+int64(i), i, trim(row)))
			out = sim.TreeOutcome{Node: -1, Next: sim.NoToken}
		}
		outs[i] = out
		if o.got != nil {
			o.got(i, row, nil)
		}
		if o.record && seeds[i] >= 0 {
			im.det.keepTree(t, seeds[i], first+int64(i), row)
		}
	}
	return nil
}

// decodeTree turns one emitted row of a tree batch (the tokens of the
// accepted path, then the extra token, then -1 padding) into a
// TreeOutcome by walking the tree from the root. Malformed rows are
// errors as for chains; a path that leaves the tree is an invalid outcome
// (its kind is returned).
func decodeTree(t *sim.Tree, row []int64, v int) (sim.TreeOutcome, string, error) {
	o, _, err := decodeRow(row, nil, len(row)-1, v)
	if err != nil {
		return sim.TreeOutcome{}, "", err
	}
	node := 0
	for j := 0; j < o.Accepted; j++ {
		c := t.Child(node, int(row[j]))
		if c < 0 {
			return sim.TreeOutcome{}, invNotInTree, nil
		}
		node = c
	}
	return sim.TreeOutcome{Node: node, Next: o.Next}, "", nil
}

// copyRow writes r's values as float32 into dst.
func copyRow(dst []float32, r sim.Row) {
	for i := range dst {
		dst[i] = float32(r.At(i))
	}
}

func growF32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// treeWhat names a tree batch's rows for sim.CheckMem.
func treeWhat(b, n, v int) string {
	return fmt.Sprintf("a batch of %d trees of up to %d nodes with their rows sent inline (batch × nodes × V = %d × 8 bytes)", b, n, v)
}

// MaxTreeNodes bounds the nodes of the trees drafter name (one of
// draft.TreeNames) builds with k candidates (children of the root, or
// nodes per layer) and branching branch over depth layers.
func MaxTreeNodes(name string, k, depth int, branch []int) int {
	if len(branch) > 0 && draft.Branches(name) {
		n, layer := 1, 1
		for _, b := range branch {
			layer *= b
			n += layer
			if n > sim.MaxTreeNodes {
				return sim.MaxTreeNodes
			}
		}
		return n
	}
	return min(1+k*depth, sim.MaxTreeNodes)
}

// replayTree is a seeded tree as first sent and answered.
type replayTree struct {
	tree       *sim.Tree
	seed, step int64
	emitted    []int64
}

// keepTree keeps a seeded tree for the determinism replay (the first
// maxReplay).
func (d *determinism) keepTree(t *sim.Tree, seed, step int64, emitted []int64) {
	if len(d.trees) >= maxReplay {
		return
	}
	d.trees = append(d.trees, replayTree{tree: cloneTree(t), seed: seed, step: step, emitted: slices.Clone(emitted)})
}

// cloneTree copies t's nodes (its rows are views of the check's pool
// rows, which outlive the run, and are shared).
func cloneTree(t *sim.Tree) *sim.Tree {
	nt := &sim.Tree{V: t.V, Ctx: t.Ctx, Nodes: slices.Clone(t.Nodes), Cands: slices.Clone(t.Cands)}
	for i := range nt.Nodes {
		nt.Nodes[i].Kids = slices.Clone(nt.Nodes[i].Kids)
		nt.Nodes[i].Draws = slices.Clone(nt.Nodes[i].Draws)
	}
	return nt
}

// treeDeterminism is Determinism in tree mode: the kept seeded trees sent
// again in one batch, reversed, each followed by an unseeded copy of
// itself, under another batch seed; each seeded tree must get its first
// answer.
func (im *Impl) treeDeterminism() (check.Component, bool, error) {
	kept := im.det.trees
	if len(kept) == 0 {
		return check.Component{}, false, nil
	}
	var ts []*sim.Tree
	var seeds []int64
	for i := len(kept) - 1; i >= 0; i-- {
		ts = append(ts, kept[i].tree, kept[i].tree)
		seeds = append(seeds, kept[i].seed, -1)
	}
	var bad []string
	nbad := 0
	outs := make([]sim.TreeOutcome, len(ts))
	err := im.treeSteps(batchOpts{seed: replaySeed, coins: coinsRandom, seeds: seeds, got: func(i int, emitted, _ []int64) {
		r := kept[len(kept)-1-i/2]
		if i%2 != 0 || slices.Equal(emitted, r.emitted) {
			return
		}
		nbad++
		if len(bad) < maxExamples {
			bad = append(bad, fmt.Sprintf("step %d (%sseed %d): emitted %v, then %v", r.step, im.kindName(r.tree.Ctx), r.seed, trim(r.emitted), trim(emitted)))
		}
	}}, ts, outs)
	if err != nil {
		return check.Component{}, false, fmt.Errorf("%v (determinism replay)", err)
	}
	return determinismComponent(len(kept), nbad, bad), true, nil
}
