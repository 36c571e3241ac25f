package algos

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// This file holds the candidate-list verifiers of the fms-extras design
// note (foundation-model-stack/fms-extras issue 12 and PR 17):
// they need no draft probabilities.

// BatchTreeAlgorithm verifies a batch of trees (one per batch row) in one
// call from one rng, as serving stacks do: a rule whose randomness is per
// batch, not per row. A rule that has it declares that its rows may share
// randomness, so the check runs it in batches (through BatchSteps) with
// the test that the rows of a batch are independent.
type BatchTreeAlgorithm interface {
	AcceptBatch(rng *rand.Rand, trees []*sim.Tree, out []sim.TreeOutcome)
}

// SharedUniform is the fms-extras "consistent multinomial" sampling
// (fms_extras/utils/generation.py __generate_targets on
// branch speculative_sample): one uniform u_j per position j is shared by
// all candidates, each candidate's ground truth at position j is the
// inverse-CDF sample y_j = min{v : CDF_{p(.|c_<j)}(v) > u_j}, and the
// candidate with the longest verified prefix wins (ties to the lowest
// index), emitting its verified prefix and its y at the next position.
// Candidates sharing a prefix share the target row and the uniform, hence
// the sample, so the winner's tokens are the target's own inverse-CDF path
// y_1, y_2, ...: the walk down the trie implemented here. Lossless for any
// candidates (no draft law needed); acceptance at a position is p(S),
// S the drafted tokens there. Randomness: one uniform per depth reached.
//
// AcceptBatch draws fresh uniforms for every row (the correct batching);
// the mutant SharedUniformBatch shares them across rows as fms-extras does.
type SharedUniform struct{}

func sharedWalk(t *sim.Tree, u []float64) sim.TreeOutcome {
	n := 0
	for j := 0; ; j++ {
		y := sim.SampleRow(u[j], t.Nodes[n].P)
		if len(t.Nodes[n].Kids) == 0 {
			return sim.TreeOutcome{Node: n, Next: y}
		}
		c := t.Child(n, y)
		if c < 0 {
			return sim.TreeOutcome{Node: n, Next: y}
		}
		n = c
	}
}

// AcceptTree runs one step.
func (SharedUniform) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	var u [sim.MaxTreeDepth + 1]float64
	for j := range u {
		u[j] = rng.Float64()
	}
	return sharedWalk(t, u[:])
}

// AcceptBatch verifies each row with its own uniforms.
func (s SharedUniform) AcceptBatch(rng *rand.Rand, trees []*sim.Tree, out []sim.TreeOutcome) {
	for i, t := range trees {
		out[i] = s.AcceptTree(rng, t)
	}
}

// TreeLaw writes the exact law: the target's path through the trie.
func (SharedUniform) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error {
	return walkLaw(TargetOnly{}, t, dst)
}

// SharedUniformBatch is a mutant: SharedUniform with the uniforms also
// shared across batch rows, as fms-extras does (key = torch.rand(1, 1,
// 1+h, 1)). Each row alone is
// exactly SharedUniform, so its marginal law is the target's and the exact
// engine calls it lossless; two identical prompts in one batch, however,
// emit identical tokens. It is a BatchTreeAlgorithm, so the check runs it
// in batches and its rows-of-a-batch test flags it, not the law.
type SharedUniformBatch struct{ SharedUniform }

// BatchSteps is a BatchTreeAlgorithm as a sim.TreeStepper: each call
// verifies its batch with one AcceptBatch.
type BatchSteps struct{ A BatchTreeAlgorithm }

// TreeSteps verifies ts by one AcceptBatch.
func (b BatchSteps) TreeSteps(rng *rand.Rand, ts []*sim.Tree, outs []sim.TreeOutcome) error {
	b.A.AcceptBatch(rng, ts, outs)
	return nil
}

// AcceptBatch verifies all rows with one set of uniforms.
func (SharedUniformBatch) AcceptBatch(rng *rand.Rand, trees []*sim.Tree, out []sim.TreeOutcome) {
	var u [sim.MaxTreeDepth + 1]float64
	for j := range u {
		u[j] = rng.Float64()
	}
	for i, t := range trees {
		out[i] = sharedWalk(t, u[:])
	}
}

// candPath writes the nodes root..end of candidate end node e into dst and
// returns the filled prefix.
func candPath(dst []int, t *sim.Tree, e int) []int {
	d := t.Nodes[e].Depth
	dst = dst[:d+1]
	for i := d; i >= 0; i-- {
		dst[i] = e
		e = t.Nodes[e].Parent
	}
	return dst
}

// Naive is the naive multi-candidate scheme of the fms-extras design note
// (foundation-model-stack/fms-extras issue 12): every candidate c draws its own
// independent target samples y^(c)_j ~ p(.|c_<j), its verified length n_c
// is the longest prefix with c_j = y^(c)_j, the candidate with the largest
// n_c wins (ties to the lowest index) and emits c_1..c_{n_c} and
// y^(c)_{n_c+1} (the bonus sample when the whole candidate matched).
// BIASED: a token shared by several candidates gets several chances to be
// matched. Its exact law enumerates the candidates' verified lengths:
//
//	Pr(n_c = j) = Π_{i≤j} p(c_i|c_<i) · (1 - p(c_{j+1}|c_≤j))   (j < |c|),
//
// independent across candidates, with the emitted token given n_c = j
// distributed as p(.|c_≤j) conditioned on differing from c_{j+1}.
// Randomness: one uniform per examined position per candidate.
type Naive struct{}

// AcceptTree runs one step.
func (Naive) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	var buf [sim.MaxTreeDepth + 1]int
	best := sim.TreeOutcome{Node: -1}
	bestLen := -1
	for _, e := range t.Cands {
		path := candPath(buf[:], t, e)
		j := 0
		y := 0
		for {
			y = sim.SampleRow(rng.Float64(), t.Nodes[path[j]].P)
			if j+1 < len(path) && t.Nodes[path[j+1]].Token == y {
				j++
				continue
			}
			break
		}
		if j > bestLen {
			bestLen = j
			best = sim.TreeOutcome{Node: path[j], Next: y}
		}
	}
	return best
}

// maxNaiveCombos bounds the joint enumeration of Naive.TreeLaw.
const maxNaiveCombos = 1 << 22

// TreeLaw writes the exact law by enumerating the verified lengths of all
// candidates. It returns an error if there are more than 2^22 combinations.
func (Naive) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error {
	dst.Reset(len(t.Nodes), t.V)
	k := len(t.Cands)
	paths := make([][]int, k)
	probs := make([][]float64, k) // probs[c][j] = Pr(n_c = j)
	combos := 1
	for c, e := range t.Cands {
		var buf [sim.MaxTreeDepth + 1]int
		paths[c] = append([]int(nil), candPath(buf[:], t, e)...)
		L := len(paths[c]) - 1
		probs[c] = make([]float64, L+1)
		reach := 1.0
		for j := 0; j <= L; j++ {
			if j == L {
				probs[c][j] = reach
				break
			}
			pn := t.Nodes[paths[c][j]].P.At(t.Nodes[paths[c][j+1]].Token)
			probs[c][j] = reach * (1 - pn)
			reach *= pn
		}
		combos *= L + 1
		if combos > maxNaiveCombos {
			return fmt.Errorf("algos: the naive law needs more than %d combinations of candidate lengths; use fewer or shorter candidates", maxNaiveCombos)
		}
	}
	w := make([]float64, t.V)
	js := make([]int, k)
	for {
		mass := 1.0
		win, wl := -1, -1
		for c, j := range js {
			mass *= probs[c][j]
			if j > wl {
				win, wl = c, j
			}
		}
		if mass > 0 {
			path := paths[win]
			node := &t.Nodes[path[wl]]
			if wl == len(path)-1 {
				dst.AddRow(path[wl], mass, node.P)
			} else {
				for i := range w {
					w[i] = node.P.At(i)
				}
				w[t.Nodes[path[wl+1]].Token] = 0
				if err := dst.AddVec(path[wl], mass, w); err != nil {
					return err
				}
			}
		}
		c := 0
		for ; c < k; c++ {
			js[c]++
			if js[c] < len(probs[c]) {
				break
			}
			js[c] = 0
		}
		if c == k {
			return nil
		}
	}
}

// BestCandidate verifies only the candidate with the longest expected
// verified length under the target, E|c| = Σ_j Π_{i≤j} p(c_i|c_<i) (ties
// to the lowest index), by sampled exact match along it (the fix the
// fms-extras note considers and rejects as inefficient): at each
// position draw y ~ p(.|c_<j); keep c_j if equal, else emit y; after the
// whole candidate emit the bonus sample. Lossless (the candidate is chosen
// from the tree, not from the samples), but its acceptance is only
// p(c_1) at the first position. Randomness: one uniform per examined
// position.
type BestCandidate struct{}

func (BestCandidate) choose(t *sim.Tree, buf []int) []int {
	best, bestScore := -1, -1.0
	for i, e := range t.Cands {
		path := candPath(buf, t, e)
		score, reach := 0.0, 1.0
		for j := 1; j < len(path); j++ {
			reach *= t.Nodes[path[j-1]].P.At(t.Nodes[path[j]].Token)
			score += reach
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return candPath(buf, t, t.Cands[best])
}

// AcceptTree runs one step.
func (b BestCandidate) AcceptTree(rng *rand.Rand, t *sim.Tree) sim.TreeOutcome {
	var buf [sim.MaxTreeDepth + 1]int
	path := b.choose(t, buf[:])
	for j := 0; ; j++ {
		y := sim.SampleRow(rng.Float64(), t.Nodes[path[j]].P)
		if j+1 < len(path) && t.Nodes[path[j+1]].Token == y {
			continue
		}
		return sim.TreeOutcome{Node: path[j], Next: y}
	}
}

// TreeLaw writes the exact outcome law.
func (b BestCandidate) TreeLaw(t *sim.Tree, dst *sim.TreeLaw) error {
	dst.Reset(len(t.Nodes), t.V)
	var buf [sim.MaxTreeDepth + 1]int
	path := b.choose(t, buf[:])
	reach := 1.0
	for j := 0; j < len(path); j++ {
		nd := &t.Nodes[path[j]]
		if j+1 == len(path) {
			dst.AddRow(path[j], reach, nd.P)
			return nil
		}
		x := t.Nodes[path[j+1]].Token
		for y := 0; y < t.V; y++ {
			if y != x {
				dst.Add(path[j], y, reach*nd.P.At(y))
			}
		}
		reach *= nd.P.At(x)
	}
	return nil
}

// CrossRowAgreement runs n batches of two rows drafted independently from
// d after the same context (two identical prompts in one batch) and
// returns how many batches emitted the same first token in both rows. For
// independent rows the agreement probability is E[Σ_x π(x)²] over the two
// rows' drafts; SharedUniformBatch makes it 1 for any rule whose first
// token is the target's inverse-CDF sample.
func CrossRowAgreement(rng *rand.Rand, a BatchTreeAlgorithm, d sim.Drafter, target sim.Model, ctx []int, n int) (agree int) {
	trees := []*sim.Tree{{}, {}}
	out := make([]sim.TreeOutcome, 2)
	var path []int
	first := func(t *sim.Tree, o sim.TreeOutcome) int {
		path = t.Path(path[:0], o.Node)
		if len(path) > 0 {
			return path[0]
		}
		return o.Next
	}
	for range n {
		for _, t := range trees {
			sim.DraftTree(rng, d, target, ctx, t)
		}
		a.AcceptBatch(rng, trees, out)
		if first(trees[0], out[0]) == first(trees[1], out[1]) {
			agree++
		}
	}
	return agree
}

func init() {
	RegisterTree(TreeEntry{Info: Info{Name: "shared-uniform", Summary: "fms-extras consistent sampling: one uniform per position shared by all candidates, longest match wins",
		Paper: "foundation-model-stack/fms-extras issue 12 and PR 17 (2024)",
		Draft: sim.DraftTopK}, New: treeNoParams(SharedUniform{})})
	RegisterTree(TreeEntry{Info: Info{Name: "best-candidate", Summary: "verify only the candidate with the longest expected length by sampled exact match",
		Paper: "foundation-model-stack/fms-extras issue 12 (2024), the fix it rejects",
		Draft: sim.DraftTopK}, New: treeNoParams(BestCandidate{})})
	RegisterTree(TreeEntry{Info: Info{Name: "naive", Lossy: true, Summary: "BIASED: an independent target sample per candidate, longest match wins, ties to the lowest index",
		Paper: "foundation-model-stack/fms-extras issue 12 (2024)",
		Draft: sim.DraftIID}, New: treeNoParams(Naive{})})
	RegisterTree(TreeEntry{Info: Info{Name: "shared-uniform-batch", Mutant: true, Summary: "shared-uniform sampling with the uniforms also shared across batch rows (checked in batches; flagged by the rows-of-a-batch test)",
		Paper: "foundation-model-stack/fms-extras PR 17 (2024): key = torch.rand(1, 1, 1+h, 1) is shared across batch rows",
		Draft: sim.DraftTopK}, New: treeNoParams(SharedUniformBatch{})})
}
