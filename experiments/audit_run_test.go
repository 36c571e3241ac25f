package experiments_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/diag"
)

// The audit's verdict: nil when every row is ok, a Violated error naming
// the rows otherwise; a bad scale is a usage error before any work.
func TestAuditVerdict(t *testing.T) {
	ok := experiments.Row{{K: "algorithm", V: "token"}, {K: "ok", V: true}}
	bad := experiments.Row{{K: "algorithm", V: "mutant-x"}, {K: "params", V: ""}, {K: "verdict", V: "lossless"},
		{K: "expected", V: "violated"}, {K: "ok", V: false}}
	if err := experiments.AuditVerdict([]experiments.Row{ok}); err != nil {
		t.Errorf("all ok: %v", err)
	}
	err := experiments.AuditVerdict([]experiments.Row{ok, bad})
	if !errors.Is(err, diag.ErrViolated) || !strings.Contains(err.Error(), "mutant-x") || !strings.Contains(err.Error(), "1 verdicts") {
		t.Errorf("one bad row: %v", err)
	}
	if _, err := experiments.RunAudit(context.Background(), experiments.AuditOptions{Scale: 0}); !errors.Is(err, diag.ErrUsage) {
		t.Errorf("scale 0: %v", err)
	}
	if n := experiments.AuditRules(); n < 10 {
		t.Errorf("AuditRules = %d", n)
	}
}
