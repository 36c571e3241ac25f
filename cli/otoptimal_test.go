package cli

import (
	"math"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// simulate exact --algo ot-optimal: lossless, and its acceptance is the
// optimum that 'simulate bound' reports (the Khisti toy at q2 = 0.1, k =
// 3: α* = 0.937667, see TestExactTreeAndBoundCommands) by the prefix form
// and by exhaustive search; --method prefix without replacement is a
// usage error.
func TestOTOptimalCommands(t *testing.T) {
	p, q := "1/3,1/3,1/3", "1/3,0.1,17/30"
	ex, code, stderr := runJSON(t, "exact", "--algo", "ot-optimal", "--k", "3", "--gamma", "1", "--p", p, "--q", q, "--seed", "1", "--json")
	if code != diag.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if ex["lossless"] != true || ex["max_abs_error"].(float64) >= 1e-12 {
		t.Errorf("ot-optimal not lossless: %v", ex["max_abs_error"])
	}
	want := 2.0/3 + 1 - 0.729
	for _, method := range []string{"prefix", "exhaustive"} {
		b, code, stderr := runJSON(t, "bound", "--k", "3", "--p", p, "--q", q, "--method", method, "--json")
		if code != diag.ExitOK {
			t.Fatalf("bound --method %s: exit %d: %s", method, code, stderr)
		}
		if opt := b["optimal_acceptance"].(float64); math.Abs(opt-want) > 1e-12 || b["method"] != method {
			t.Errorf("bound --method %s: %v = %.15g, want %.15g", method, b["method"], opt, want)
		}
	}
	if acc := ex["acceptance"].(float64); math.Abs(acc-want) > 1e-9 {
		t.Errorf("ot-optimal acceptance %.15g, alpha* %.15g", acc, want)
	}
	if _, code, _ := runJSON(t, "bound", "--k", "3", "--replacement=false", "--method", "prefix", "--p", p, "--q", q); code != diag.ExitUsage {
		t.Errorf("bound --method prefix --replacement=false: exit %d, want %d", code, diag.ExitUsage)
	}
}

// simulate bound --topk: the two most likely draft tokens (q = 0.4, 0.3)
// carry p = 0.05 + 0.1, which is α* for that fixed draft set; --method
// beside --topk and k > V are usage errors.
func TestBoundTopK(t *testing.T) {
	p, q := "0.5,0.2,0.15,0.1,0.05", "0.05,0.1,0.15,0.3,0.4"
	b, code, stderr := runJSON(t, "bound", "--k", "2", "--topk", "--p", p, "--q", q, "--json")
	if code != diag.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if opt := b["optimal_acceptance"].(float64); math.Abs(opt-0.15) > 1e-12 || b["topk"] != true || b["method"] != "topk" {
		t.Errorf("bound --topk: %v", b)
	}
	for _, args := range [][]string{{"--k", "2", "--topk", "--method", "flow"}, {"--k", "6", "--topk"}} {
		if _, code, _ := runJSON(t, append([]string{"bound", "--p", p, "--q", q}, args...)...); code != diag.ExitUsage {
			t.Errorf("bound %v: exit %d, want %d", args, code, diag.ExitUsage)
		}
	}
}
