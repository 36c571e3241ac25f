package plots

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot/plotter"

	"github.com/specsim/specsim/table"
)

// xy returns the points (x, y) of rows, sorted by x; rows with a NaN or an
// infinity are skipped.
func xy(rows []table.Row, x, y string) plotter.XYs {
	var out plotter.XYs
	for _, r := range rows {
		a, b := table.Num(r, x), table.Num(r, y)
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			continue
		}
		out = append(out, plotter.XY{X: a, Y: b})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].X < out[j].X })
	return out
}

// need fails unless rows is non-empty and every row has the columns.
func need(experiment string, rows []table.Row, cols ...string) error {
	if len(rows) == 0 {
		return fmt.Errorf("plots: no rows for %s; run 'simulate run %s' first", experiment, experiment)
	}
	for _, c := range cols {
		if _, ok := rows[0].Get(c); !ok {
			return fmt.Errorf("plots: %s rows have no column %q; the table is not the output of experiment %s", experiment, c, experiment)
		}
	}
	return nil
}
