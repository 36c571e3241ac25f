package experiments

import (
	"math"
	"testing"
)

// The KL-matched table takes each rule at its setting whose KL is closest
// to the budget and compares it at the KL it uses: the stored frontier
// and one-D columns of that row, n/a where the KL is infinite.
func TestFrontierTableIsKLMatched(t *testing.T) {
	row := func(rule string, value, acc, kl, front, uni float64) Row {
		return Row{{K: "kind", V: "rule"}, {K: "source", V: "dirichlet"}, {K: "V", V: int64(10)}, {K: "quality", V: 0.6}, {K: "rule", V: rule},
			{K: "param", V: "x"}, {K: "value", V: value}, {K: "acceptance", V: acc}, {K: "kl", V: kl}, {K: "tv", V: 0.1},
			{K: "frontier_acceptance", V: front}, {K: "uniform_acceptance", V: uni}, {K: "gap", V: front - acc}}
	}
	rows := []Row{
		row("cascade", 1, 0.65, 0.2, 0.8, 0.78), row("cascade", 2, 0.62, 0.05, 0.7, 0.69), // 0.05 is nearer 0.01 in log KL
		row("typical", 1, 0.9, math.Inf(1), 1, 1),
		{{K: "kind", V: "frontier"}, {K: "source", V: "dirichlet"}, {K: "V", V: int64(10)}, {K: "quality", V: 0.6}, {K: "rule", V: "frontier"},
			{K: "value", V: 0.01}, {K: "acceptance", V: 0.6}, {K: "kl", V: 0.01}},
	}
	tab := frontierTable(rows, "dirichlet", 10, 0.6, 0.01)
	if len(tab.Rows) != 2 {
		t.Fatalf("%d rows, want cascade and typical (no frontier row): %q", len(tab.Rows), tab.Rows)
	}
	if got := tab.Rows[0]; got[2] != "2" || got[3] != "0.0500" || got[6] != "0.700" || got[7] != "0.080" || got[8] != "0.690" {
		t.Errorf("cascade row %q, want value 2 at KL 0.0500 with frontier 0.700, gap 0.080, one-D 0.690", got)
	}
	if got := tab.Rows[1]; got[3] != "+Inf" || got[6] != NA || got[7] != NA {
		t.Errorf("typical row %q, want KL +Inf and n/a against the frontier", got)
	}
}
