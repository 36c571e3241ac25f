package data

import (
	"fmt"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

// checkTreeRow validates one decoded tree row: header, the tree's shape
// (a root, parents before children, distinct tokens among siblings, rows
// in range, depth), the rows' values, the drafted tokens' q > 0 (for
// probabilities; logits are checked after the transform, by the reader)
// and the path (it follows the tree's edges from the root, and the
// emitted tokens are its tokens then at most one extra). Each problem is
// one *StepError naming the step, the field and the node. row is the
// row's index in the file and v the file's vocabulary size (0 if not yet
// known).
func checkTreeRow(r *TreeLogRow, row int64, v int, budget int64) error {
	bad := func(field, format string, a ...any) error {
		return &StepError{Row: row, RunID: r.RunID, PromptID: r.PromptID, Step: r.Step, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if r.SchemaVersion != TreeSchemaVersion {
		return bad("schema_version", "version %d in a tree log; every row of a tree log has version %d", r.SchemaVersion, TreeSchemaVersion)
	}
	vs := int(r.VocabSize)
	switch {
	case vs < 2:
		return bad("vocab_size", "V = %d; need at least 2 tokens", vs)
	case vs > MaxVocab:
		return bad("vocab_size", "V = %d is above the largest vocabulary a log may declare, %d (data.MaxVocab)", vs, MaxVocab)
	case v > 0 && vs != v:
		return bad("vocab_size", "V = %d but earlier rows have V = %d; a log holds one vocabulary", vs, v)
	}
	if r.RowKind != KindProbs && r.RowKind != KindLogits {
		return bad("row_kind", "%q; use %q or %q", r.RowKind, KindProbs, KindLogits)
	}
	if r.Layout != LayoutDense {
		return bad("layout", "%q; tree logs store dense rows (layout %q)", r.Layout, LayoutDense)
	}
	s := Sampling{Temperature: r.Temperature, TopK: int(r.TopK), TopP: r.TopP, MinP: r.MinP}
	if err := s.Validate(); err != nil {
		return bad("sampling", "%v", err)
	}
	if len(r.P)%vs != 0 || len(r.P) == 0 {
		return bad("p", "%d entries; need a positive multiple of V = %d (one row per target row)", len(r.P), vs)
	}
	if len(r.Q)%vs != 0 {
		return bad("q", "%d entries; need a multiple of V = %d (one row per draft row)", len(r.Q), vs)
	}
	np, nq := len(r.P)/vs, len(r.Q)/vs
	if err := checkTreeMem(np+nq, vs, budget); err != nil {
		return bad("vocab_size", "%v", err)
	}
	if err := checkTreeShape(r, np, nq, bad); err != nil {
		return err
	}
	for i := range np {
		if msg := checkValues(r.RowKind, r.P[i*vs:(i+1)*vs], 0, true); msg != "" {
			return bad("p", "row %d: %s", i, msg)
		}
	}
	for i := range nq {
		if msg := checkValues(r.RowKind, r.Q[i*vs:(i+1)*vs], 0, true); msg != "" {
			return bad("q", "row %d: %s", i, msg)
		}
	}
	if r.RowKind == KindProbs {
		for i := 1; i < len(r.NodeParent); i++ {
			if qr := r.NodeQ[r.NodeParent[i]]; qr >= 0 && !(r.Q[int(qr)*vs+int(r.NodeToken[i])] > 0) {
				return bad("node_token", "node %d: token %d has q = 0 in its parent node %d's draft row %d: it cannot have been drawn from it",
					i, r.NodeToken[i], r.NodeParent[i], qr)
			}
		}
	}
	return checkTreePath(r, bad)
}

// checkTreeShape checks the node columns of r, whose rows hold np target
// and nq draft rows.
func checkTreeShape(r *TreeLogRow, np, nq int, bad func(string, string, ...any) error) error {
	n := len(r.NodeParent)
	if n < 2 || n > sim.MaxTreeNodes {
		return bad("node_parent", "%d nodes; a tree has the root and at least one drafted node, at most %d in all (sim.MaxTreeNodes)", n, sim.MaxTreeNodes)
	}
	for _, c := range []struct {
		name string
		col  []int32
	}{{"node_token", r.NodeToken}, {"node_q", r.NodeQ}, {"node_p", r.NodeP}} {
		if len(c.col) != n {
			return bad(c.name, "%d entries for the %d nodes of node_parent; every node column has one entry per node", len(c.col), n)
		}
	}
	if r.NodeParent[0] != -1 || r.NodeToken[0] != -1 {
		return bad("node_parent", "node 0 has parent %d and token %d; node 0 is the root, with parent -1 and token -1", r.NodeParent[0], r.NodeToken[0])
	}
	depth := make([]int, n)
	maxDepth := 0
	for i := 0; i < n; i++ {
		if p := r.NodeP[i]; p < 0 || int(p) >= np {
			return bad("node_p", "node %d: target row %d is outside the %d rows of p", i, p, np)
		}
		if q := r.NodeQ[i]; q < -1 || int(q) >= nq {
			return bad("node_q", "node %d: draft row %d is outside the %d rows of q (-1: none)", i, q, nq)
		}
		if i == 0 {
			continue
		}
		p, x := int(r.NodeParent[i]), r.NodeToken[i]
		if p < 0 || p >= i {
			return bad("node_parent", "node %d: parent %d is not an earlier node; parents come before their children (0 <= parent < node)", i, p)
		}
		if x < 0 || int(x) >= int(r.VocabSize) {
			return bad("node_token", "node %d: token %d is outside the vocabulary [0, %d)", i, x, r.VocabSize)
		}
		for j := p + 1; j < i; j++ {
			if int(r.NodeParent[j]) == p && r.NodeToken[j] == x {
				return bad("node_token", "node %d repeats token %d of its sibling node %d (parent %d); siblings carry distinct tokens", i, x, j, p)
			}
		}
		if depth[i] = depth[p] + 1; depth[i] > sim.MaxTreeDepth {
			return bad("node_parent", "node %d is at depth %d, deeper than %d (sim.MaxTreeDepth)", i, depth[i], sim.MaxTreeDepth)
		}
		maxDepth = max(maxDepth, depth[i])
	}
	if int(r.Gamma) != maxDepth {
		return bad("gamma", "%d, but the tree's deepest node is at depth %d; gamma is the tree's depth", r.Gamma, maxDepth)
	}
	return nil
}

// checkTreePath checks that r's path follows the tree's edges from the
// root and that the emitted tokens are the path's tokens then at most one
// extra token, in the vocabulary.
func checkTreePath(r *TreeLogRow, bad func(string, string, ...any) error) error {
	n := int32(len(r.NodeParent))
	prev := int32(0)
	for k, m := range r.Path {
		if m <= 0 || m >= n {
			return bad("path", "position %d names node %d, which is not a drafted node of the tree (1..%d)", k, m, n-1)
		}
		if r.NodeParent[m] != prev {
			return bad("path", "position %d: node %d is not a child of node %d (its parent is node %d): the path leaves the tree", k, m, prev, r.NodeParent[m])
		}
		prev = m
	}
	ne, np := len(r.Emitted), len(r.Path)
	if ne == 0 || ne < np || ne > np+1 {
		return bad("emitted_tokens", "%d tokens for a path of %d nodes; a step emits the path's tokens, then at most one extra token, and at least one token", ne, np)
	}
	for k, x := range r.Emitted {
		if x < 0 || x >= r.VocabSize {
			return bad("emitted_tokens", "token %d at position %d is outside [0, %d)", x, k, r.VocabSize)
		}
		if k < np && x != r.NodeToken[r.Path[k]] {
			return bad("emitted_tokens", "token %d at position %d differs from token %d of path node %d; the emitted tokens begin with the path's", x, k, r.NodeToken[r.Path[k]], r.Path[k])
		}
	}
	return nil
}

// checkTreeMem checks the memory one tree step of rows float32 rows of V =
// v entries takes in the reader (stored and processed) against budget (0:
// sim.DefaultMemBudget).
func checkTreeMem(rows, v int, budget int64) error {
	if err := sim.CheckMem(fmt.Sprintf("a tree step of %d rows over V = %d", rows, v),
		sim.MulBytes(int64(rows), int64(v), 4*2), budget, "check the log's vocab_size and rows"); err != nil {
		return diag.Usage(err)
	}
	return nil
}
