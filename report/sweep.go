package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/table"
)

// dedicated reports whether experiment e has figures or tables of its own
// in the report (a main-job experiment that declares some); every other
// merged table in a bundle (a user's own sweep) gets the generic ones.
func dedicated(e experiments.Experiment) bool {
	return e.Main > 0 && len(e.Figures)+len(e.Tables) > 0
}

// genericNames are the bundle's experiments without dedicated figures or
// tables, sorted.
func genericNames(b *Bundle) []string {
	var out []string
	for name := range b.Rows {
		if e, err := experiments.Lookup(name); err == nil && dedicated(e) {
			continue
		}
		if len(b.Rows[name]) > 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// sweepSchema is the axes and metrics of a merged sweep: from the spec the
// merge recorded (results.KeySpec: its axes; its metrics, or when it
// lists none every other column), else plots.SweepColumns' split by type.
func sweepSchema(b *Bundle, name string) (axes, metrics []string) {
	rows := b.Rows[name]
	var spec struct {
		Metrics []string `json:"metrics"`
		Axes    []struct {
			Name string `json:"name"`
		} `json:"axes"`
	}
	if s := b.Meta[name][results.KeySpec]; s != "" && json.Unmarshal([]byte(s), &spec) == nil && len(spec.Axes) > 0 {
		for _, a := range spec.Axes {
			axes = append(axes, a.Name)
		}
		metrics = spec.Metrics
		if len(metrics) == 0 && len(rows) > 0 {
			for _, kv := range rows[0] {
				if kv.K != "experiment" && !slices.Contains(axes, kv.K) {
					metrics = append(metrics, kv.K)
				}
			}
		}
		return axes, metrics
	}
	return plots.SweepColumns(rows)
}

// SweepFigures are the generic figures (plots.Sweep) of the bundle's
// experiments without dedicated ones; a sweep with nothing to draw (no
// swept axis or no numeric metric) gets none, and its table still
// appears.
func SweepFigures(b *Bundle) []*plots.Figure {
	var out []*plots.Figure
	for _, name := range genericNames(b) {
		axes, metrics := sweepSchema(b, name)
		figs, err := plots.Sweep(name, b.Rows[name], axes, metrics)
		if err != nil {
			continue
		}
		out = append(out, figs...)
	}
	return out
}

// SweepTable is the generic table of a merged sweep: its axes, then its
// metrics (4 significant digits; a metric with m_lo/m_hi columns shows its
// interval in the next column).
func SweepTable(name string, rows []table.Row, axes, metrics []string) table.Text {
	t := table.Text{Name: name, Caption: fmt.Sprintf("Sweep %s: every merged row, axes then metrics (95%% intervals where the rows carry m_lo/m_hi).", name)}
	var cols []string
	for _, a := range axes {
		if len(rows) > 0 {
			if _, ok := rows[0].Get(a); ok {
				cols = append(cols, a)
			}
		}
	}
	nAxes := len(cols)
	type metric struct{ name, lo, hi string }
	var ms []metric
	for _, m := range metrics {
		if len(rows) == 0 || slices.Contains(axes, m) {
			continue
		}
		if _, ok := rows[0].Get(m); !ok || isBandName(m) {
			continue
		}
		mm := metric{name: m}
		_, a := rows[0].Get(m + "_lo")
		_, h := rows[0].Get(m + "_hi")
		if a && h {
			mm.lo, mm.hi = m+"_lo", m+"_hi"
		}
		ms = append(ms, mm)
	}
	t.Header = append(t.Header, cols...)
	for _, m := range ms {
		t.Header = append(t.Header, m.name)
		if m.lo != "" {
			t.Header = append(t.Header, m.name+" 95% CI")
		}
	}
	t.Right = make([]bool, len(t.Header))
	for i := nAxes; i < len(t.Right); i++ {
		t.Right[i] = true
	}
	g := func(r table.Row, k string) string {
		v, ok := r.Get(k)
		if !ok {
			return table.NA
		}
		if f, isF := v.(float64); isF {
			if math.IsNaN(f) {
				return table.NA
			}
			return fmt.Sprintf("%.4g", f)
		}
		return fmt.Sprint(v)
	}
	for _, r := range rows {
		var cells []string
		for _, a := range cols {
			cells = append(cells, r.String(a))
		}
		for _, m := range ms {
			cells = append(cells, g(r, m.name))
			if m.lo != "" {
				cells = append(cells, "["+g(r, m.lo)+", "+g(r, m.hi)+"]")
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

func isBandName(m string) bool {
	return len(m) > 3 && (m[len(m)-3:] == "_lo" || m[len(m)-3:] == "_hi") || m == "ci_lo" || m == "ci_hi"
}
