package external

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
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
	seed := rng.Uint64()
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.err != nil {
		return im.err
	}
	if im.cfg.Mode != Tree {
		panic("external: trees sent to an implementation in " + im.cfg.Mode + " mode")
	}
	b, g, v := len(ts), im.cfg.Gamma, im.cfg.V
	k, first, where := im.next(b)
	if b == 0 {
		return nil
	}
	n, kd := 1, 1
	pooled := im.pool != nil
	for _, t := range ts {
		if t.V != v {
			panic(fmt.Sprintf("external: a tree over V = %d; the implementation was started with V = %d", t.V, v))
		}
		n = max(n, len(t.Nodes))
		for j := range t.Nodes {
			kd = max(kd, len(t.Nodes[j].Draws))
		}
		if t.Ctx < 0 || t.Ctx >= contexts(im.pool) {
			pooled = false
		}
	}
	rows := "inline"
	switch {
	case pooled:
		rows = "pool"
	case im.mp != nil:
		rows = "markov"
	}
	if rows == "inline" {
		if err := sim.CheckMem(treeWhat(b, n, v), TreeBytes(b, n, v), im.cfg.MemBudget, "lower the batch size"); err != nil {
			return im.fail(fmt.Errorf("external: %s: %s: %w", im.name, where, err))
		}
	}
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
				tb.prow[at] = int64(t.Ctx*(g+1) + min(nd.Depth, g))
				if hasQ {
					tb.qrow[at] = int64(t.Ctx*g + min(nd.Depth, g-1))
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
			for j := len(t.Nodes); j < n; j++ {
				clear(tb.tabP[(i*n+j)*v : (i*n+j+1)*v])
				clear(tb.tabQ[(i*n+j)*v : (i*n+j+1)*v])
			}
		}
	}
	h := header{Op: "batch", Batch: k, First: first, Size: b, Seed: seed, Coins: coinsRandom, Rows: rows,
		Arrays: []string{"parent", "token", "draws", "nodes", "prow", "qrow"}}
	if rows == "inline" {
		h.Arrays = append(h.Arrays, "p", "q")
	}
	err := im.p.send(h, func(w io.Writer) error {
		var err error
		for _, a := range []struct {
			x     []int64
			shape []int
		}{{tb.parent, []int{b, n}}, {tb.token, []int{b, n}}, {tb.draws, []int{b, n, kd}}, {tb.nodes, []int{b}}, {tb.prow, []int{b, n}}, {tb.qrow, []int{b, n}}} {
			if im.scratch, err = writeI64(w, a.shape, a.x, im.scratch); err != nil {
				return err
			}
		}
		if rows == "inline" {
			for _, x := range [][]float32{tb.tabP, tb.tabQ} {
				if im.scratch, err = writeF32(w, []int{b * n, v}, x, im.scratch); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	rh, err := im.p.recv([]string{"emitted"}, []*array{&im.emitted})
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
		o, inv, err := decodeTree(t, row, v)
		if err != nil {
			return im.fail(fmt.Errorf("external: %s: %s, step %d (row %d): %v", im.name, where, first+int64(i), i, err))
		}
		if inv != "" {
			im.invalid.add(inv, fmt.Sprintf("%s, step %d (row %d): emitted %v", where, first+int64(i), i, trim(row)))
			o = sim.TreeOutcome{Node: -1, Next: sim.NoToken}
		}
		outs[i] = o
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

// MaxTreeNodes bounds the nodes of the trees drafter name (iid, wor, topk,
// greedy, dynamic) builds with k candidates (children of the root, or
// nodes per layer) and branching branch over depth layers.
func MaxTreeNodes(name string, k, depth int, branch []int) int {
	if len(branch) > 0 && name != "iid" && name != "dynamic" {
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
