package algos

import (
	"fmt"
	"math"
)

// The closed forms of Leviathan, Kalman and Matias, "Fast Inference from
// Transformers via Speculative Decoding" (arXiv 2211.17192, §3), for token verification under the i.i.d. assumption
// that every position is accepted with the same probability α = E[β],
// β = Σ_x min(p(x), q(x)).

// MaxFormulaGamma bounds γ in the formulas below (the sums are O(γ)).
const MaxFormulaGamma = 1 << 20

func checkFormula(alpha float64, gamma int, cost float64, costName string) error {
	switch {
	case !(alpha >= 0 && alpha <= 1):
		return fmt.Errorf("alpha = %g; the acceptance rate must be in [0, 1]", alpha)
	case gamma < 1 || gamma > MaxFormulaGamma:
		return fmt.Errorf("gamma = %d; use 1 <= gamma <= %d", gamma, MaxFormulaGamma)
	case !(cost >= 0) || math.IsInf(cost, 1):
		return fmt.Errorf("%s = %g; the cost ratio must be a finite number >= 0", costName, cost)
	}
	return nil
}

// ExpectedTokens returns the expected number of tokens one step of token
// verification emits (accepted draft tokens plus the correction or bonus
// token) when each position is accepted independently with probability α
// (Leviathan et al. Eq. 1):
//
//	E[#tokens] = (1 - α^(γ+1)) / (1 - α) = Σ_{k=0..γ} α^k,
//
// γ + 1 at α = 1. It is computed as the sum, which stays accurate as α → 1.
// The number of accepted draft tokens is a capped geometric:
// Pr(n) = α^n (1 - α) for n < γ, α^γ for n = γ. It returns an error for α
// outside [0, 1] or γ outside [1, MaxFormulaGamma].
func ExpectedTokens(alpha float64, gamma int) (float64, error) {
	if err := checkFormula(alpha, gamma, 0, "c"); err != nil {
		return 0, err
	}
	return geomSum(alpha, gamma), nil
}

func geomSum(alpha float64, gamma int) float64 {
	s, a := 0.0, 1.0
	for range gamma + 1 {
		s += a
		a *= alpha
	}
	return s
}

// WalltimeImprovement returns the expected walltime improvement factor of
// speculative decoding over standard decoding (Thm 3.8), c being the cost
// of one draft step relative to one target step:
//
//	S(α, γ, c) = (1 - α^(γ+1)) / ((1 - α)(γ·c + 1)).
//
// Cor. 3.9: if α > c then γ = 1 already gives S ≥ (1 + α)/(1 + c) > 1.
func WalltimeImprovement(alpha float64, gamma int, c float64) (float64, error) {
	if err := checkFormula(alpha, gamma, c, "c"); err != nil {
		return 0, err
	}
	return geomSum(alpha, gamma) / (float64(gamma)*c + 1), nil
}

// OperationsFactor returns the expected factor by which speculative
// decoding increases the number of arithmetic operations (Thm 3.11), ĉ
// being the ratio of a draft step's operations per token to the target's:
//
//	(1 - α)(γ·ĉ + γ + 1) / (1 - α^(γ+1)).
func OperationsFactor(alpha float64, gamma int, cHat float64) (float64, error) {
	if err := checkFormula(alpha, gamma, cHat, "c_hat"); err != nil {
		return 0, err
	}
	return (float64(gamma)*cHat + float64(gamma) + 1) / geomSum(alpha, gamma), nil
}

// BestGamma returns the γ in [1, maxGamma] that maximises the walltime
// improvement S(α, γ, c) of Thm 3.8, and that improvement; ties go to the
// smaller γ. S need not exceed 1: if α ≤ c no γ helps (Cor. 3.9) and the
// caller should not speculate. For c = 0, S grows with γ towards 1/(1 - α),
// so the answer is maxGamma, or the γ from which α^γ no longer changes S in
// float64 if that comes first (γ ≈ 30 at α = 0.3). It returns an error for α
// outside [0, 1], c < 0, or maxGamma outside [1, MaxFormulaGamma].
func BestGamma(alpha, c float64, maxGamma int) (int, float64, error) {
	if err := checkFormula(alpha, maxGamma, c, "c"); err != nil {
		if maxGamma < 1 || maxGamma > MaxFormulaGamma {
			return 0, 0, fmt.Errorf("max gamma = %d; use 1 <= max gamma <= %d", maxGamma, MaxFormulaGamma)
		}
		return 0, 0, err
	}
	best, bestS := 0, math.Inf(-1)
	s, a := 1.0, alpha // s = Σ_{k=0..γ} α^k, built incrementally
	for g := 1; g <= maxGamma; g++ {
		s += a
		a *= alpha
		if v := s / (float64(g)*c + 1); v > bestS {
			best, bestS = g, v
		}
	}
	return best, bestS, nil
}
