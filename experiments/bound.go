package experiments

import (
	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

// BoundResult is the optimal multi-draft acceptance of one pair; it is the
// JSON form of 'simulate bound'. Field names are stable.
type BoundResult struct {
	V           int  `json:"V"`
	K           int  `json:"k"`
	Replacement bool `json:"replacement"`
	// TopK marks deterministic drafts: the k most likely tokens of q
	// (ties to the lowest index), whose α* is their p-mass.
	TopK              bool    `json:"topk"`
	Method            string  `json:"method"`
	OptimalAcceptance float64 `json:"optimal_acceptance"`
	// SingleDraft is Σ min(p, q), the k = 1 value (token verification).
	SingleDraft float64 `json:"single_draft"`
	// The depth-d optimum (BoundDepth; absent at one position): the model
	// pair, the drafter (kind, children per depth for wor and topk), the
	// depth and V_d, the largest E[accepted] per step over node-wise
	// lossless verifiers (algos.OptimalTreeAccepted).
	Source          string  `json:"source,omitempty"`
	Draft           string  `json:"draft,omitempty"`
	Branch          []int   `json:"branch,omitempty"`
	Depth           int     `json:"depth,omitempty"`
	OptimalAccepted float64 `json:"optimal_expected_accepted,omitempty"`
}

// Bound computes α* = min_A [1 − p(A) + P(draft set meets A)] for k drafts
// of q (i.i.d. with replacement, else without) against p by method: auto
// (exhaustive for V ≤ algos.MaxExhaustiveV, else the prefix form with
// replacement and max-flow without), exhaustive, flow or prefix (i.i.d.
// drafts only: algos.OptimalAcceptanceIID, any V). Errors are usage errors
// (internal/diag).
func Bound(p, q []float64, k int, replacement bool, method string) (BoundResult, error) {
	if err := sim.ValidatePair(p, q); err != nil {
		return BoundResult{}, diag.Usage(err)
	}
	if method == "auto" {
		method = "exhaustive"
		if len(p) > algos.MaxExhaustiveV {
			method = "flow"
			if replacement {
				method = "prefix"
			}
		}
	}
	var a float64
	var err error
	switch method {
	case "exhaustive":
		a, err = algos.OptimalAcceptanceExhaustive(p, q, k, replacement)
	case "flow":
		a, err = algos.OptimalAcceptanceFlow(p, q, k, replacement)
	case "prefix":
		if !replacement {
			return BoundResult{}, diag.Param("method", " prefix holds for i.i.d. drafts (replacement) only; without replacement use flow or exhaustive")
		}
		a, err = algos.OptimalAcceptanceIID(p, q, k)
	default:
		return BoundResult{}, diag.Param("method", " %q: use auto, exhaustive, flow or prefix", method)
	}
	if err != nil {
		return BoundResult{}, diag.Usage(err)
	}
	return BoundResult{V: len(p), K: k, Replacement: replacement, Method: method, OptimalAcceptance: a, SingleDraft: sim.Alpha(p, q)}, nil
}

// BoundTopK is Bound for top-k drafts: the draft set is the k most likely
// tokens of q, fixed, so α* = p(that set) (method "topk", by the max-flow
// over the one set). Errors are usage errors.
func BoundTopK(p, q []float64, k int) (BoundResult, error) {
	if err := sim.ValidatePair(p, q); err != nil {
		return BoundResult{}, diag.Usage(err)
	}
	if k < 1 || k > len(p) {
		return BoundResult{}, diag.Param("k", " = %d; top-k drafts need 1 <= k <= V = %d", k, len(p))
	}
	a := algos.OptimalAcceptanceSets(p, [][]int{sim.TopTokens(nil, q, k)}, []float64{1})
	return BoundResult{V: len(p), K: k, TopK: true, Method: "topk", OptimalAcceptance: a, SingleDraft: sim.Alpha(p, q)}, nil
}

// BoundDepth computes the depth-d optimum of pair for the drafter of cfg
// (algos.OptimalTreeAccepted) beside α* and Σ min(p, q) of the root's rows
// (α* as the depth-1 optimum of the same drafter). Errors, the sizes the
// enumeration refuses among them, are usage errors.
func BoundDepth(pair sim.Pair, cfg algos.TreeOptimumConfig) (BoundResult, error) {
	vd, err := algos.OptimalTreeAccepted(pair, cfg)
	if err != nil {
		return BoundResult{}, diag.Usage(err)
	}
	one := cfg
	one.Depth = 1
	if one.Branch != nil {
		one.Branch = cfg.Branch[:1]
	}
	a, err := algos.OptimalTreeAccepted(pair, one)
	if err != nil {
		return BoundResult{}, diag.Usage(err)
	}
	v := pair.P.Vocab()
	p, q := make([]float64, v), make([]float64, v)
	pair.P.Next(cfg.Context, p)
	pair.Q.Next(cfg.Context, q)
	sim.Normalize(p)
	sim.Normalize(q)
	k := cfg.K
	if cfg.Branch != nil {
		k = cfg.Branch[0]
	}
	return BoundResult{V: v, K: k, Replacement: cfg.Draft == sim.DraftIID, TopK: cfg.Draft == sim.DraftTopK, Method: "lp",
		OptimalAcceptance: a, SingleDraft: sim.Alpha(p, q), Source: pair.Name, Draft: cfg.Draft.String(), Branch: cfg.Branch,
		Depth: cfg.Depth, OptimalAccepted: vd}, nil
}
