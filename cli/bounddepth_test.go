package cli

import (
	"math"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// simulate bound --depth: on a Markov pair the depth-d optimum is at least
// the exact E[accepted] of ot-optimal, a node-wise rule, on the same
// drafter (1e-9), and at depth 1 equals it and the JSON's α*; on a
// context-free -p/-q pair with branch k at each depth it is α*(1 + α*)
// at depth 2 (1e-9); the flags it refuses give exit 2.
func TestBoundDepthCommand(t *testing.T) {
	src := "markov:V=4,order=1,seed=7"
	for _, d := range []string{"1", "2"} {
		b, code, stderr := runJSON(t, "bound", "--depth", d, "--k", "2", "--source", src, "--json")
		if code != diag.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		ex, code, stderr := runJSON(t, "exact", "--algo", "ot-optimal", "--k", "2", "--gamma", d, "--source", src, "--json")
		if code != diag.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		opt, got := b["optimal_expected_accepted"].(float64), ex["expected_accepted"].(float64)
		if got > opt+1e-9 || (d == "1" && (math.Abs(got-opt) > 1e-9 || math.Abs(opt-b["optimal_acceptance"].(float64)) > 1e-12)) {
			t.Errorf("depth %s: optimum %.15g, ot-optimal %.15g, alpha* %v", d, opt, got, b["optimal_acceptance"])
		}
		if b["draft"] != "iid" || b["depth"].(float64) != map[string]float64{"1": 1, "2": 2}[d] {
			t.Errorf("depth %s: draft %v depth %v", d, b["draft"], b["depth"])
		}
	}
	p, q := "1/2,1/4,1/4", "1/6,1/2,1/3"
	b, code, stderr := runJSON(t, "bound", "--depth", "2", "--k", "2", "--replacement=false", "--branch", "2,2", "--p", p, "--q", q, "--json")
	if code != diag.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	a := b["optimal_acceptance"].(float64)
	if got := b["optimal_expected_accepted"].(float64); math.Abs(got-a*(1+a)) > 1e-9 {
		t.Errorf("context-free depth 2: %.15g, alpha*(1 + alpha*) = %.15g", got, a*(1+a))
	}
	for _, args := range [][]string{
		{"--depth", "2", "--p", p, "--q", q, "--method", "flow"},
		{"--depth", "2", "--p", p, "--q", q, "--branch", "2,2"},
		{"--depth", "2", "--p", p, "--q", q, "--replacement=false", "--branch", "2"},
		{"--depth", "0", "--p", p, "--q", q},
		{"--source", src, "--p", p, "--q", q},
		{"--depth", "2", "--k", "4", "--source", "markov:V=40,order=1,seed=7"},
		{"--k", "2"},
	} {
		if _, code, _ := runJSON(t, append([]string{"bound"}, args...)...); code != diag.ExitUsage {
			t.Errorf("bound %v: exit %d, want %d", args, code, diag.ExitUsage)
		}
	}
}
