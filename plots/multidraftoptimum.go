package plots

import (
	"fmt"
	"math"
	"slices"

	"github.com/specsim/specsim/table"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// optimumKinds are multidraft-optimum's draft kinds, one panel each, with
// the panel titles, in this order; a kind the rows hold beyond these (a
// new drafter's) gets a panel after them, titled "KIND drafts".
var optimumKinds = []struct{ kind, title string }{
	{"iid", "i.i.d. drafts"}, {"wor", "without replacement"}, {"greedy", "greedy drafts"}, {"topk", "top-k drafts"}}

// panelKinds returns optimumKinds, then every other draft kind of rows.
func panelKinds(rows []table.Row) []struct{ kind, title string } {
	out := slices.Clone(optimumKinds)
	for _, k := range table.DistinctS(rows, "draft") {
		if !slices.ContainsFunc(out, func(o struct{ kind, title string }) bool { return o.kind == k }) {
			out = append(out, struct{ kind, title string }{k, k + " drafts"})
		}
	}
	return out
}

// MultidraftOptimum draws multidraft-optimum on one pair: small multiples,
// one panel per draft kind, first-token acceptance vs k per rule of that
// kind with the optimum α* of the kind as a dashed yardstick line. p and q
// are the pair's rows, written in the caption.
func MultidraftOptimum(rows []table.Row, pair string, p0, q0 []float64) (*Figure, error) {
	if err := need("multidraft-optimum", rows, "pair", "k", "verifier", "draft", "acceptance", "bound"); err != nil {
		return nil, err
	}
	rows = table.Where(rows, table.Eq("pair", pair))
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: multidraft-optimum has no rows for pair %q", pair)
	}
	f := &Figure{Name: "multidraft-optimum", Width: ColumnWidth, GridCols: 2, LegendCols: 3, PanelHeight: 1.2 * vg.Inch,
		Caption: fmt.Sprintf("Multi-draft rules against the optimum on the %s pair%s: exact acceptance of a drafted first token vs the number of drafts k, one panel per draft kind on one acceptance scale, the dashed line the optimal acceptance α* for that kind.", pair, rowsText(p0, q0))}
	ks := table.Distinct(rows, "k")
	kinds := panelKinds(rows)
	if len(table.DistinctS(rows, "draft")) > 4 {
		f.GridCols = 3 // five or six panels in two rows, as tall as four
	}
	for _, dk := range kinds {
		sub := table.Where(rows, table.Eq("draft", dk.kind))
		if len(sub) == 0 {
			continue
		}
		pn := newPanel("drafts k", "acceptance")
		pn.Title.Text = dk.title
		f.Panels = append(f.Panels, pn)
		verifiers := table.DistinctS(sub, "verifier")
		s := StyleOf("bound-iid")
		l := line(xy(table.Where(sub, table.Eq("verifier", verifiers[0])), "k", "bound"), s.Color, s.Dashes)
		l.Width = vg.Points(1.4)
		pn.Add(l)
		f.AddLegendTo(0, "α* of the kind", l)
		for _, v := range verifiers {
			ln, m := styled(xy(table.Where(sub, table.Eq("verifier", v)), "k", "acceptance"), v)
			pn.Add(ln, m)
			f.AddLegendTo(0, v, ln, m)
		}
		f.Caption += coincideText(sub, verifiers)
	}
	lo := math.Inf(1)
	for _, r := range rows {
		a, _ := r.Float("acceptance")
		lo = math.Min(lo, a)
	}
	for _, pn := range f.Panels {
		optimumAxes(pn, ks, lo)
	}
	return f, nil
}

// coincideText is a caption sentence naming the verifiers whose
// acceptance agrees to 1e-12 at every k with an earlier one of the panel
// (their markers hide each other), or "".
func coincideText(rows []table.Row, verifiers []string) string {
	var out string
	for i, a := range verifiers {
		for _, b := range verifiers[:i] {
			pa := xy(table.Where(rows, table.Eq("verifier", a)), "k", "acceptance")
			pb := xy(table.Where(rows, table.Eq("verifier", b)), "k", "acceptance")
			same := len(pa) == len(pb)
			for j := 0; same && j < len(pa); j++ {
				same = pa[j].X == pb[j].X && math.Abs(pa[j].Y-pb[j].Y) <= 1e-12
			}
			if same {
				out += fmt.Sprintf(" %s and %s coincide at every k.", b, a)
				break
			}
		}
	}
	return out
}

// optimumAxes marks the ks on x and gives every panel the y range [lo, 1]
// (one scale across panels), with room for markers at both ends.
func optimumAxes(pn *plot.Plot, ks []float64, lo float64) {
	var ts []plot.Tick
	for _, k := range ks {
		ts = append(ts, plot.Tick{Value: k, Label: fmt.Sprint(k)})
	}
	pn.X.Tick.Marker = plot.ConstantTicks(ts)
	padX(pn, ks[0], ks[len(ks)-1])
	pn.Y.Min = lo - padFrac*(1-lo)
	pn.Y.Max = 1 + padFrac*(1-lo)
}
