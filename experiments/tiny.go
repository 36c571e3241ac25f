package experiments

import (
	"context"
	"fmt"

	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/table"
)

// A scratch experiment (reverted in the next commit): one file declares
// its cells, its figure, its table and a paper number.
func init() {
	Register(Experiment{Name: "tiny", Main: 200, Section: "A tiny experiment", Summary: "y = x² on four cells",
		Cells: func(Config) ([]Cell, error) {
			var cs []Cell
			for x := int64(1); x <= 4; x++ {
				cs = append(cs, Cell{Key: []KV{{K: "x", V: x}}})
			}
			return cs, nil
		},
		Run: func(_ context.Context, _ Config, c Cell, _ uint64) ([]Row, error) {
			x := float64(c.Key[0].V.(int64))
			return []Row{{{K: "y", V: x * x}}}, nil
		},
		Figures: []Figure{{Name: "tiny-vs-x", Make: func(rows []Row) (*plots.Figure, error) {
			figs, err := plots.Sweep("tiny", rows, []string{"x"}, []string{"y"})
			if err != nil || len(figs) == 0 {
				return nil, fmt.Errorf("tiny: %v", err)
			}
			figs[0].Name = "tiny-vs-x"
			return figs[0], nil
		}}},
		Tables: []Table{{Name: "tiny", Make: func(rows []Row) table.Text {
			t := table.Text{Caption: "y = x²", Header: []string{"x", "y"}, Right: []bool{true, true}}
			for _, r := range rows {
				t.Rows = append(t.Rows, []string{fmt.Sprint(r.Float("x")), fmt.Sprint(r.Float("y"))})
			}
			return t
		}}},
		Numbers: []table.Number{{Macro: "TinyMax", Agg: table.Max, Col: "y", Doc: "the largest y"}},
	})
}
