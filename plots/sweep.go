package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// Sweep draws any merged sweep without code of its own: one figure per
// swept axis (an axis with more than one value in rows), named
// NAME-vs-AXIS, with one panel per metric (the metric against the axis)
// and one curve per combination of the other swept axes' values. A metric
// m gets a 95% band where the rows carry m_lo and m_hi (or m_ci_lo and
// m_ci_hi; or ci_lo and ci_hi when m is the only metric). Numeric axes
// are drawn on their values; string axes (algo, source) as categories in
// the order of first appearance. Axes and metrics name columns; metrics
// whose name ends in _lo, _hi or is ci_lo/ci_hi are bands, not panels, and
// non-numeric metrics are left out. The axis "replicate" (ReplicateAxis)
// is never drawn: each point is the mean over its replicates, with a 95%
// Student-t band across them in place of the rows' own bands. An error
// says why nothing can be drawn (no rows, no swept axis, no numeric
// metric).
func Sweep(name string, rows []table.Row, axes, metrics []string) ([]*Figure, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: sweep %s has no rows", name)
	}
	rows, axes, note := poolReplicates(rows, axes, metrics)
	var swept []string
	for _, a := range axes {
		if _, ok := rows[0].Get(a); ok && len(distinctText(rows, a)) > 1 {
			swept = append(swept, a)
		}
	}
	if len(swept) == 0 {
		return nil, fmt.Errorf("plots: sweep %s has no axis with more than one value (axes %v)", name, axes)
	}
	var ms []string
	for _, m := range metrics {
		if isBand(m) || slices.Contains(axes, m) {
			continue
		}
		if v, ok := rows[0].Get(m); ok && isNumber(v) {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("plots: sweep %s has no numeric metric among %v", name, metrics)
	}
	var out []*Figure
	for _, x := range swept {
		f, err := sweepFigure(name, rows, x, swept, ms, note)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// SweepColumns splits a table's columns into axes and metrics when no
// spec says which: the string, bool and integer columns (except
// experiment) are axes, the float columns metrics, but for a float column
// of one value in every row of several (a setting such as the trials n),
// which a panel would draw as a flat line: it is neither.
func SweepColumns(rows []table.Row) (axes, metrics []string) {
	if len(rows) == 0 {
		return nil, nil
	}
	for _, kv := range rows[0] {
		if kv.K == "experiment" {
			continue
		}
		if _, ok := kv.V.(float64); !ok {
			axes = append(axes, kv.K)
		} else if len(rows) == 1 || len(table.Distinct(rows, kv.K)) > 1 {
			metrics = append(metrics, kv.K)
		}
	}
	return axes, metrics
}

func isBand(m string) bool {
	return strings.HasSuffix(m, "_lo") || strings.HasSuffix(m, "_hi") || m == "ci_lo" || m == "ci_hi"
}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, int64, int:
		return true
	}
	return false
}

// distinctText is the distinct values of column k as text, in order of
// first appearance.
func distinctText(rows []table.Row, k string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		s := r.String(k)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// bandCols returns the interval columns of metric m, if the rows have them.
func bandCols(r table.Row, m string, only bool) (lo, hi string, ok bool) {
	cands := [][2]string{{m + "_lo", m + "_hi"}, {m + "_ci_lo", m + "_ci_hi"}}
	if only {
		cands = append(cands, [2]string{"ci_lo", "ci_hi"})
	}
	for _, c := range cands {
		_, a := r.Get(c[0])
		_, b := r.Get(c[1])
		if a && b {
			return c[0], c[1], true
		}
	}
	return "", "", false
}

// ReplicateAxis names the sweep axis whose values are repeats of one
// setting under other seeds (experiments' "replicate"), pooled by Sweep.
const ReplicateAxis = "replicate"

// poolReplicates replaces rows that differ only in ReplicateAxis by one
// row of the other axes' values and, for each numeric metric m, the mean
// m over the replicates with m_lo and m_hi its 95% Student-t interval
// (stattest.SmallSample; non-finite values are left out). Without two or
// more replicates it returns its arguments and an empty note; else the
// rows, the axes without ReplicateAxis, and a caption note.
func poolReplicates(rows []table.Row, axes, metrics []string) ([]table.Row, []string, string) {
	if !slices.Contains(axes, ReplicateAxis) || len(distinctText(rows, ReplicateAxis)) < 2 {
		return rows, axes, ""
	}
	axes = slices.DeleteFunc(slices.Clone(axes), func(a string) bool { return a == ReplicateAxis })
	var ms []string
	for _, m := range metrics {
		if v, ok := rows[0].Get(m); ok && isNumber(v) && !isBand(m) && !slices.Contains(axes, m) {
			ms = append(ms, m)
		}
	}
	var keys []string
	groups := map[string][]table.Row{}
	for _, r := range rows {
		var parts []string
		for _, a := range axes {
			parts = append(parts, a+"="+r.String(a))
		}
		k := strings.Join(parts, "\x00")
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []table.Row
	fewest, most := len(rows), 0
	for _, k := range keys {
		g := groups[k]
		fewest, most = min(fewest, len(g)), max(most, len(g))
		var r table.Row
		for _, a := range axes {
			if v, ok := g[0].Get(a); ok {
				r = append(r, table.KV{K: a, V: v})
			}
		}
		for _, m := range ms {
			var xs []float64
			for _, gr := range g {
				if v := table.Num(gr, m); !math.IsNaN(v) && !math.IsInf(v, 0) {
					xs = append(xs, v)
				}
			}
			sm := stattest.SmallSample(xs, 0.95)
			r = append(r, table.KV{K: m, V: sm.Mean}, table.KV{K: m + "_lo", V: sm.Lo}, table.KV{K: m + "_hi", V: sm.Hi})
		}
		out = append(out, r)
	}
	n := strconv.Itoa(most)
	if fewest != most {
		n = strconv.Itoa(fewest) + "–" + n
	}
	return out, axes, fmt.Sprintf("; each point is the mean over %s replicates, its band the 95%% Student-t interval across them (the rows' own intervals are not drawn)", n)
}

// sweepFigure draws each metric of ms against the swept axis x, one panel
// per metric and one curve per combination of the other swept axes; note
// (if any) replaces the caption's words on bands.
func sweepFigure(name string, rows []table.Row, x string, swept, ms []string, note string) (*Figure, error) {
	var others []string
	for _, a := range swept {
		if a != x {
			others = append(others, a)
		}
	}
	// x positions: the values of a numeric axis, else category indices
	xv, numeric := rows[0].Get(x)
	ax := sweepAxis{name: x, numeric: numeric && isNumber(xv), cats: distinctText(rows, x)}
	curves := sweepCurves(rows, others)
	f := sweepFrame(name, x, others, ms, note)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		lo, hi = math.Min(lo, ax.pos(r)), math.Max(hi, ax.pos(r))
	}
	for _, m := range ms {
		p := newPanel(columnLabel(x), columnLabel(m))
		for i, c := range curves {
			s := autoStyle(i)
			if len(others) == 1 && (others[0] == "algo" || others[0] == "rule" || others[0] == "algorithm") {
				s = StyleOf(c.rows[0].String(others[0]))
			}
			c.draw(f, p, ax, m, s, len(ms) == 1)
		}
		if hi > lo {
			padX(p, lo, hi)
		} else {
			p.X.Min, p.X.Max = lo-0.5, hi+0.5
		}
		ax.ticks(p, rows, lo, hi)
		f.Panels = append(f.Panels, p)
	}
	return f, nil
}

// sweepAxis is a sweep figure's x axis: a numeric axis's values, or the
// indices of its categories.
type sweepAxis struct {
	name    string
	numeric bool
	cats    []string
}

// pos is row r's x position.
func (ax sweepAxis) pos(r table.Row) float64 {
	if ax.numeric {
		return table.Num(r, ax.name)
	}
	return float64(slices.Index(ax.cats, r.String(ax.name)))
}

// ticks labels a category axis by its categories, and an integer axis
// spanning at most 16 by its values.
func (ax sweepAxis) ticks(p *plot.Plot, rows []table.Row, lo, hi float64) {
	if !ax.numeric {
		var ts []plot.Tick
		for i, c := range ax.cats {
			ts = append(ts, plot.Tick{Value: float64(i), Label: c})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ts)
	} else if allIntegers(rows, ax.name) && hi-lo <= 16 {
		var ts []plot.Tick
		for _, v := range distinctText(rows, ax.name) {
			n, _ := strconv.ParseFloat(v, 64)
			ts = append(ts, plot.Tick{Value: n, Label: v})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ts)
	}
}

// sweepCurve is one curve of a sweep figure: the rows of one combination
// of the other swept axes, labelled "axis=value, ...".
type sweepCurve struct {
	label string
	rows  []table.Row
}

// sweepCurves groups the rows by their values of the other swept axes,
// in order of first appearance.
func sweepCurves(rows []table.Row, others []string) []*sweepCurve {
	var curves []*sweepCurve
	byKey := map[string]*sweepCurve{}
	for _, r := range rows {
		var parts []string
		for _, o := range others {
			parts = append(parts, o+"="+r.String(o))
		}
		k := strings.Join(parts, ", ")
		c := byKey[k]
		if c == nil {
			c = &sweepCurve{label: k}
			byKey[k] = c
			curves = append(curves, c)
		}
		c.rows = append(c.rows, r)
	}
	return curves
}

// sweepFrame is the sweep figure without panels: its name, grid and
// caption.
func sweepFrame(name, x string, others, ms []string, note string) *Figure {
	cols := 1
	if len(ms) > 1 {
		cols = 2
	}
	f := &Figure{Name: name + "-vs-" + x, GridCols: cols, LegendCols: 2, PanelHeight: 1.6 * vg.Inch,
		Caption: fmt.Sprintf("Sweep %s: each metric against %s, one panel per metric", name, x)}
	if len(others) > 0 {
		f.Caption += fmt.Sprintf(", one curve per value of %s", strings.Join(others, ", "))
	}
	if note != "" {
		f.Caption += note + ". Drawn by plots.Sweep from the merged table, with no code for this sweep."
	} else {
		f.Caption += "; bands are the rows' 95% intervals where they carry them (columns m_lo/m_hi or ci_lo/ci_hi). Drawn by plots.Sweep from the merged table, with no code for this sweep."
	}
	return f
}

// draw adds the curve's metric m to panel p in style s, with its band
// where the rows carry one (bandCols; only: m is the figure's one
// metric), and its legend entry to f.
func (c *sweepCurve) draw(f *Figure, p *plot.Plot, ax sweepAxis, m string, s Style, only bool) {
	pts := pointsAt(c.rows, ax.pos, m)
	if len(pts) == 0 {
		return
	}
	if bl, bh, ok := bandCols(c.rows[0], m, only); ok {
		los, his := pointsAt(c.rows, ax.pos, bl), pointsAt(c.rows, ax.pos, bh)
		if len(los) == len(pts) && len(his) == len(pts) {
			p.Add(band(los, his, s.Color))
		}
	}
	l, mk := line(pts, s.Color, s.Dashes), marks(pts, s.Color, s.Shape)
	p.Add(l, mk)
	label := c.label
	if label == "" {
		label = m
	}
	f.AddLegend(label, l, mk)
}

// pointsAt is (pos(r), r[y]) for the rows with a finite position and y,
// sorted by x.
func pointsAt(rows []table.Row, pos func(table.Row) float64, y string) plotter.XYs {
	var out plotter.XYs
	for _, r := range rows {
		v, x := table.Num(r, y), pos(r)
		if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		out = append(out, plotter.XY{X: x, Y: v})
	}
	slices.SortStableFunc(out, func(a, b plotter.XY) int {
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	})
	return out
}

func allIntegers(rows []table.Row, k string) bool {
	for _, r := range rows {
		if _, ok := r.Get(k); !ok {
			return false
		}
		v, _ := r.Get(k)
		if _, isInt := v.(int64); !isInt {
			return false
		}
	}
	return true
}

// columnLabel is a column's name as an axis label: its words separated by
// spaces rather than underscores (mean_emitted: "mean emitted").
func columnLabel(col string) string { return strings.ReplaceAll(col, "_", " ") }
