package draft

import (
	"fmt"
	"strconv"
	"strings"
)

// Policy kinds.
const (
	PolicyFixed  = "fixed"
	PolicyConf   = "conf"
	PolicyOracle = "oracle"
)

// Policy is a draft-length policy of a chain drafter: PolicyFixed drafts
// γ tokens; PolicyConf stops after a drafted token x_i whose draft
// probability q_i(x_i) is below Threshold (the assistant-confidence
// family: Mamou et al. 2024, arXiv 2405.04304, DISCO; transformers'
// assistant_confidence_threshold); PolicyOracle drafts γ but a generation
// charges it only for the tokens accepted (an upper bound: it knows the
// accepted length in advance). The zero Policy drafts like PolicyFixed.
type Policy struct {
	Kind      string  `json:"kind"`
	Threshold float64 `json:"threshold,omitempty"`
}

// String renders the policy as ParsePolicy reads it.
func (p Policy) String() string {
	if p.Kind == PolicyConf {
		return PolicyConf + ":" + strconv.FormatFloat(p.Threshold, 'g', -1, 64)
	}
	return p.Kind
}

// ParsePolicy reads "fixed", "oracle" or "conf:τ" with τ in (0, 1).
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", PolicyFixed:
		return Policy{Kind: PolicyFixed}, nil
	case PolicyOracle:
		return Policy{Kind: PolicyOracle}, nil
	}
	if v, ok := strings.CutPrefix(s, PolicyConf+":"); ok {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || !(t > 0 && t < 1) {
			return Policy{}, fmt.Errorf("policy %q: the confidence threshold must be a number in (0, 1)", s)
		}
		return Policy{Kind: PolicyConf, Threshold: t}, nil
	}
	return Policy{}, fmt.Errorf("policy %q: use fixed, oracle or conf:THRESHOLD", s)
}

// Stops reports whether the policy ends the draft after a token drafted
// with probability qx.
func (p Policy) Stops(qx float64) bool { return p.Kind == PolicyConf && qx < p.Threshold }

// check validates a policy given in a struct literal.
func (p Policy) check() error {
	switch p.Kind {
	case "", PolicyFixed, PolicyOracle:
		return nil
	case PolicyConf:
		if !(p.Threshold > 0 && p.Threshold < 1) {
			return fmt.Errorf("policy conf: threshold = %g; use a number in (0, 1)", p.Threshold)
		}
		return nil
	}
	return fmt.Errorf("policy %q: use fixed, oracle or conf with a threshold", p.Kind)
}
