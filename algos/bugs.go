package algos

// Evidence is what in a check's result shows a catalogued bug.
type Evidence int

const (
	// ByLaw: the bug's mutant has an exact law given the drafts that
	// differs from every lossless rule's; a chain check's likelihood of
	// its outcomes under that law names it.
	ByLaw Evidence = iota
	// ByEdge: the bug lives on coins of probability zero, so its law is
	// the nominal rule's and no likelihood can name it; the scripted-coin
	// edge case that accepts a draft token of target probability 0 does.
	ByEdge
	// ByRows: every row's law given its drafts is the nominal rule's and
	// the bug couples the rows of a batch (their randomness is per batch),
	// so no likelihood of a row's outcomes can name it; a rejecting
	// rows-of-a-batch independence test does. Its mutant is a registered
	// rule that verifies a batch at once (BatchTreeAlgorithm).
	ByRows
)

// NoThread is a Bug's Thread where no public issue or pull request
// reports it.
const NoThread = "no public thread"

// Bug is one entry of the bug catalogue: a bug found (or plausible) in
// public speculative samplers, the registered mutant that plants it, and
// the public thread that reports it.
type Bug struct {
	// Name says what is wrong, in the words of a report ("residual drawn
	// from p").
	Name string
	// Mutant is the registered rule (a mutant) that plants the bug: a
	// chain rule, or for ByRows a tree rule that verifies a batch at once.
	Mutant string
	// Thread is the URL of the public issue or pull request the bug comes
	// from, or NoThread.
	Thread string
	// Evidence is what shows it in a check (ByLaw: the mutant's law).
	Evidence Evidence
}

// catalogue is the bug catalogue, in the order of issue 28's list. It is a
// package variable so that the mutants' init functions can cite their
// threads.
var catalogue = []Bug{
	{Name: "residual drawn from p", Mutant: "mutant-resample-p", Thread: NoThread},
	{Name: "residual not renormalised", Mutant: "mutant-residual-unnormalised", Thread: NoThread},
	{Name: "bonus from p_gamma", Mutant: "mutant-bonus-row", Thread: NoThread},
	{Name: "bonus from q", Mutant: "mutant-bonus-q", Thread: NoThread},
	{Name: "inclusive comparison", Mutant: "mutant-zero-coin", Thread: "https://github.com/sgl-project/sglang/issues/35771", Evidence: ByEdge},
	{Name: "temperature mismatch between draft and ratio", Mutant: "mutant-q-mismatch", Thread: "https://github.com/huggingface/transformers/issues/47932"},
	{Name: "acceptance uniform reused for the correction", Mutant: "mutant-coin-reuse", Thread: "https://github.com/vllm-project/vllm-ascend/pull/16370"},
	{Name: "uniforms shared across positions", Mutant: "mutant-shared-coin", Thread: NoThread},
	{Name: "off-by-one ratio index", Mutant: "mutant-ratio-shift", Thread: NoThread},
	{Name: "rejected drafts kept", Mutant: "mutant-always-accept", Thread: "https://github.com/lucidrains/speculative-decoding/issues/3"},
	{Name: "exact match resampled on a mismatch", Mutant: "mutant-exact-match-resample", Thread: "https://github.com/ml-explore/mlx-swift-lm/pull/459"},
	{Name: "cumulative-product block verification with a token residual", Mutant: "mutant-block-tokenwise", Thread: "https://github.com/vllm-project/vllm-ascend/pull/7808"},
	{Name: "reduced-precision draft path", Mutant: "mutant-reduced-precision", Thread: "https://github.com/deepseek-ai/DeepSpec/issues/31"},
	{Name: "uniforms shared across rows of a batch", Mutant: "shared-uniform-batch", Thread: NoThread, Evidence: ByRows},
}

// Bugs returns the bug catalogue (a copy), in a fixed order.
func Bugs() []Bug { return append([]Bug(nil), catalogue...) }

// bugOf is the catalogue's entry for mutant (zero if none).
func bugOf(mutant string) Bug {
	for _, b := range catalogue {
		if b.Mutant == mutant {
			return b
		}
	}
	return Bug{}
}
