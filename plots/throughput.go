package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/specsim/specsim/table"
)

// Throughput draws the throughput experiment as three panels: the chain
// rules' CPU time per step against V (at γ = gamma) and against γ (at
// V = v), and the tree rules' CPU time per tree against the candidates k,
// log–log, one colour and marker per rule (its fixed style).
func Throughput(rows []table.Row, v, gamma int) (*Figure, error) {
	if err := need("throughput", rows, "kind", "rule", "V", "gamma", "k", "cpu_ns_per_step"); err != nil {
		return nil, err
	}
	chain := table.Where(rows, table.Eq("kind", "chain"))
	tree := table.Where(rows, table.Eq("kind", "tree"))
	if len(chain) == 0 {
		return nil, fmt.Errorf("plots: throughput has no chain rows")
	}
	atG := table.Where(chain, func(r table.Row) bool { return table.Num(r, "gamma") == float64(gamma) })
	atV := table.Where(chain, func(r table.Row) bool { return table.Num(r, "V") == float64(v) })
	treeV := "n/a"
	if len(tree) > 0 {
		treeV = tree[0].String("V")
	}
	f := &Figure{Name: "throughput", Width: TextWidth, GridCols: 3, LegendCols: 9, PanelHeight: 1.8 * vg.Inch,
		Caption: fmt.Sprintf("The cost of the rules on the benchmark workload, one worker: CPU time per step (µs) of the chain rules against the vocabulary size V at γ = %d (left) and against γ at V = %d (middle), and CPU time per tree of depth 4 of the tree rules against the candidates k at V = %s (right), log–log. Timings of one machine (the table names its processor and the load), the median of repeated runs.", gamma, v, treeV)}
	panel := func(sub []table.Row, x, xlabel, ylabel string) *plot.Plot {
		p := newPanel(xlabel, ylabel)
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		var ticks []plot.Tick
		for _, xv := range table.Distinct(sub, x) {
			lab := fmt.Sprint(xv)
			if xv >= 1000 && math.Mod(xv, 1000) == 0 {
				lab = fmt.Sprintf("%gk", xv/1000) // 16000 and 32000 ran into each other
			}
			ticks = append(ticks, plot.Tick{Value: xv, Label: lab})
		}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(ticks), logTicks{}
		if len(ticks) < minLogLabels {
			p.X.Tick.Marker = logTicks{}
		}
		for _, rule := range table.DistinctS(sub, "rule") {
			pts := positive(xy(table.Where(sub, table.Eq("rule", rule)), x, "cpu_ns_per_step"))
			for i := range pts {
				pts[i].Y /= 1e3 // µs, the unit of the tables and the text
			}
			l, m := styled(pts, rule)
			p.Add(l, m)
			f.AddLegend(rule, l, m)
		}
		xs := table.Distinct(sub, x)
		if len(xs) > 0 {
			p.X.Min, p.X.Max = xs[0]/1.3, xs[len(xs)-1]*1.3
		}
		lo, hi := positiveRange(sub, "cpu_ns_per_step")
		p.Y.Min, p.Y.Max = lo/1e3, hi/1e3
		return p
	}
	f.Panels = append(f.Panels, panel(atG, "V", "vocabulary size V", "CPU µs per step"), panel(atV, "gamma", "draft length γ", ""))
	if len(tree) > 0 {
		f.Panels = append(f.Panels, panel(tree, "k", "candidates k (depth 4)", "CPU µs per tree"))
	}
	return f, nil
}
