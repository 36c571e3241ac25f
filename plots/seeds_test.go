package plots

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/specsim/specsim/table"
)

// The seeds figure draws one marker and interval per replicate, the
// replicates' mean and a band of ± one SD about it that is labelled, and
// reads; fewer than two replicates is an error.
func TestSeedsFigure(t *testing.T) {
	var rows []table.Row
	gains := []float64{0.20, 0.22, 0.21, 0.23}
	for i, g := range gains {
		rows = append(rows,
			table.Row{{K: "replicate", V: int64(i + 1)}, {K: "rule", V: "token"}, {K: "mean_emitted", V: 2.3}, {K: "ci_lo", V: 2.28}, {K: "ci_hi", V: 2.32}},
			table.Row{{K: "replicate", V: int64(i + 1)}, {K: "rule", V: "gain"}, {K: "mean_emitted", V: g}, {K: "ci_lo", V: g - 0.02}, {K: "ci_hi", V: g + 0.02}})
	}
	f, err := Seeds(rows, 4, 0.6)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Problems() {
		t.Error(p)
	}
	if names := strings.Join(f.LegendNames(), "|"); names != "gain, 95% CI|mean of replicates|± 1 SD of replicates" {
		t.Errorf("legend %q", names)
	}
	pts, errs, mean, sd := seedsSpread(table.Where(rows, table.Eq("rule", "gain")))
	if len(pts) != len(gains) || pts[2] != (plotter.XY{X: 3, Y: 0.21}) || math.Abs(errs[1].Low-0.02) > 1e-12 || math.Abs(errs[1].High-0.02) > 1e-12 {
		t.Errorf("points %v, errors %v", pts, errs)
	}
	// mean 0.215, SD √(Σ(g − 0.215)²/3) = √(0.0005/3)
	if math.Abs(mean-0.215) > 1e-12 || math.Abs(sd-math.Sqrt(0.0005/3)) > 1e-12 {
		t.Errorf("mean %g, SD %g; want 0.215 and %g", mean, sd, math.Sqrt(0.0005/3))
	}
	if _, err := f.Render("png"); err != nil {
		t.Fatal(err)
	}
	if _, err := Seeds(rows[:2], 4, 0.6); err == nil {
		t.Error("one replicate drew a figure; want an error")
	}
}
