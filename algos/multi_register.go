package algos

import "github.com/specsim/specsim/sim"

func init() {
	RegisterTree(TreeEntry{Info: Info{Name: "specinfer", Summary: "multi-round rejection sampling with replacement over i.i.d. drafts (SpecInfer, MCSD)",
		Paper: "Miao et al. 2024, arXiv 2305.09781; Yang et al. 2024, arXiv 2401.06706"},
		Draft: sim.DraftIID, NeedsQ: true, New: treeNoParams(SpecInfer{})})
	RegisterTree(TreeEntry{Info: Info{Name: "rrs-wor", Summary: "recursive rejection sampling without replacement (RSD, EAGLE-1)",
		Paper: "Jeon et al. 2024, arXiv 2402.14160; EAGLE-1 (SafeAILab/EAGLE before June 2024)"},
		Draft: sim.DraftWOR, NeedsQ: true, New: treeNoParams(RRSWithout{})})
	RegisterTree(TreeEntry{Info: Info{Name: "kseq", Summary: "SpecTr K-SEQ with rho* by bisection over i.i.d. drafts",
		Paper: "Sun et al. 2023, arXiv 2310.15141, Alg. 2"},
		Draft: sim.DraftIID, NeedsQ: true, New: treeNoParams(KSeq{})})
	RegisterTree(TreeEntry{Info: Info{Name: "target-only", Summary: "membership rule for deterministic children: accept a child w.p. p, zero rejected siblings (EAGLE-2, SGLang)",
		Paper: "EAGLE-2 evaluate_posterior (SafeAILab/EAGLE bfeb532); SGLang TreeSpeculativeSamplingTargetOnly"},
		Draft: sim.DraftTopK, New: treeNoParams(TargetOnly{})})
	RegisterTree(TreeEntry{Info: Info{Name: "greedy-draft", Summary: "top-(k-1) draft tokens plus one sample from the rest, with the matching optimal verifier",
		Paper: "Hu et al. 2025, arXiv 2502.18779"},
		Draft: sim.DraftGreedy, NeedsQ: true, New: treeNoParams(GreedyDraft{})})
	RegisterTree(TreeEntry{Info: Info{Name: "shared-uniform", Summary: "fms-extras consistent sampling: one uniform per position shared by all candidates, longest match wins",
		Paper: "fms-extras issue 12 / PR 17 (seed 002)"},
		Draft: sim.DraftTopK, New: treeNoParams(SharedUniform{})})
	RegisterTree(TreeEntry{Info: Info{Name: "best-candidate", Summary: "verify only the candidate with the longest expected length by sampled exact match",
		Paper: "fms-extras issue 12 (seed 002), the rejected fix"},
		Draft: sim.DraftTopK, New: treeNoParams(BestCandidate{})})
	RegisterTree(TreeEntry{Info: Info{Name: "naive", Lossy: true, Summary: "BIASED: an independent target sample per candidate, longest match wins, ties to the lowest index",
		Paper: "fms-extras issue 12 (seed 002)"},
		Draft: sim.DraftIID, New: treeNoParams(Naive{})})
	RegisterTree(TreeEntry{Info: Info{Name: "topk-ratio", Mutant: true, Summary: "min(1, p/q) recursive rejection applied to deterministic top-k children (not drawn from q)",
		Paper: "REFERENCES §5.1 harness warning; SafeAILab/EAGLE issues 183, 221"},
		Draft: sim.DraftTopK, NeedsQ: true, New: treeNoParams(RRSWithout{})})
	RegisterTree(TreeEntry{Info: Info{Name: "shared-uniform-batch", Mutant: true, Summary: "shared-uniform sampling with the uniforms also shared across batch rows (flagged by cross-row correlation)",
		Paper: "fms-extras PR 17 key = torch.rand(1, 1, 1+h, 1); REFERENCES §10 item 7"},
		Draft: sim.DraftTopK, New: treeNoParams(SharedUniformBatch{})})
}
