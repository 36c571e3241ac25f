package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/specsim/specsim/table"
)

// Seeds draws the seeds experiment: per replicate (x), block
// verification's paired gain over token verification in emitted tokens
// per step with its 95% interval (y), the replicates' mean (solid line)
// and the band of ± one standard deviation of the replicates about it
// (the run-to-run spread an interval of one run has to cover). Rows are
// the experiment's; only those of rule "gain" are drawn.
func Seeds(rows []table.Row, gamma int, beta float64) (*Figure, error) {
	if err := need("seeds", rows, "replicate", "rule", "mean_emitted", "ci_lo", "ci_hi"); err != nil {
		return nil, err
	}
	gain := table.Where(rows, table.Eq("rule", "gain"))
	if len(gain) < 2 {
		return nil, fmt.Errorf("plots: seeds has %d gain rows; it needs two replicates", len(gain))
	}
	pts, errs, mean, sd := seedsSpread(gain)
	p := newPanel("replicate (seed of pool and trials)", "block − token (tokens per step)")
	f := &Figure{Name: "seeds", LegendCols: 3, PanelHeight: 1.7 * vg.Inch,
		Caption: fmt.Sprintf("Block verification's gain over token verification at γ = %d on dirichlet:V=2048 pools of draft quality β = %g under %d seeds (each its own pool and trials): each replicate's paired gain with its 95%% interval, the replicates' mean (line) and ± one standard deviation of the replicates about it (band).", gamma, beta, len(gain))}
	lo, hi := pts[0].X, pts[len(pts)-1].X
	grey := rgb(0x7F7F7F)
	b := band(plotter.XYs{{X: lo - 1, Y: mean - sd}, {X: hi + 1, Y: mean - sd}}, plotter.XYs{{X: lo - 1, Y: mean + sd}, {X: hi + 1, Y: mean + sd}}, grey)
	m := line(plotter.XYs{{X: lo - 1, Y: mean}, {X: hi + 1, Y: mean}}, grey, nil)
	p.Add(b, m)
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYer
		plotter.YErrorer
	}{pts, errs})
	if err != nil {
		return nil, fmt.Errorf("plots: seeds: %w", err)
	}
	st := StyleOf("block")
	eb.Color, eb.CapWidth = st.Color, vg.Points(2.5)
	mk := marks(pts, st.Color, st.Shape)
	p.Add(eb, mk)
	f.AddLegend("gain, 95% CI", mk)
	f.AddLegend("mean of replicates", m)
	f.AddLegend("± 1 SD of replicates", b)
	if hi-lo > 10 {
		ts := intTickList(5, int(hi), 5)
		p.X.Tick.Marker = plot.ConstantTicks(append([]plot.Tick{{Value: lo, Label: fmt.Sprint(lo)}}, ts...))
	} else {
		intTicks(p, int(lo), int(hi), 1)
	}
	padX(p, lo, hi)
	f.Panels = append(f.Panels, p)
	return f, nil
}

// seedsSpread is the gain rows' points (replicate, gain), their intervals
// as error bars, and the replicates' mean and sample standard deviation.
func seedsSpread(gain []table.Row) (pts plotter.XYs, errs plotter.YErrors, mean, sd float64) {
	n := float64(len(gain))
	for _, r := range gain {
		y := table.Num(r, "mean_emitted")
		pts = append(pts, plotter.XY{X: table.Num(r, "replicate"), Y: y})
		errs = append(errs, struct{ Low, High float64 }{y - table.Num(r, "ci_lo"), table.Num(r, "ci_hi") - y})
		mean += y / n
	}
	ss := 0.0
	for _, q := range pts {
		ss += (q.Y - mean) * (q.Y - mean)
	}
	return pts, errs, mean, math.Sqrt(ss / (n - 1))
}
