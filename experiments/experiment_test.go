package experiments

import (
	"context"
	"strings"
	"testing"

	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/table"
)

// Register refuses declarations that cannot work, naming what is wrong;
// a new experiment with a figure, a table and a number of its own passes.
func TestCheckDeclaration(t *testing.T) {
	cells := func(Config) ([]Cell, error) { return []Cell{{Key: []KV{{K: "x", V: int64(1)}}}}, nil }
	run := func(context.Context, Config, Cell, uint64) ([]Row, error) { return nil, nil }
	fig := func([]Row) (*plots.Figure, error) { return nil, nil }
	tab := func([]Row) table.Text { return table.Text{} }
	ok := Experiment{Name: "x-new", Main: 99, Cells: cells, Run: run,
		Figures: []Figure{{Name: "x-new", Make: fig}}, Tables: []Table{{Name: "x-new", Make: tab}},
		Numbers: []table.Number{{Macro: "XNewRows", Agg: table.Count}}}
	if err := checkDeclaration(ok); err != nil {
		t.Fatalf("a good declaration: %v", err)
	}
	for _, c := range []struct {
		edit func(*Experiment)
		want string
	}{
		{func(e *Experiment) { e.Name = "audit" }, "duplicate experiment"},
		{func(e *Experiment) { e.Run = nil }, "Cells and Run go together"},
		{func(e *Experiment) { e.Cells, e.Run = nil, nil }, "neither Cells nor Whole"},
		{func(e *Experiment) { e.Main = 0 }, "main-job experiments"},
		{func(e *Experiment) { e.Figures[0].Name = "multidraft" }, "figure multidraft is already declared by multidraft"},
		{func(e *Experiment) { e.Figures = append(e.Figures, e.Figures[0]) }, "figure x-new is already declared by x-new"},
		{func(e *Experiment) { e.Tables[0].Make = nil }, `table "x-new" is malformed or has no Make`},
		{func(e *Experiment) { e.Numbers[0].Macro = "X1" }, `number "X1" is malformed`},
		{func(e *Experiment) { e.Numbers[0].Macro = "TableOneCells" }, "number TableOneCells is already declared by leviathan-table1"},
	} {
		e := ok
		e.Figures = append([]Figure(nil), ok.Figures...)
		e.Tables = append([]Table(nil), ok.Tables...)
		e.Numbers = append([]table.Number(nil), ok.Numbers...)
		c.edit(&e)
		if err := checkDeclaration(e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.want, err, c.want)
		}
	}
	// Whole alone is a declaration too (fms-scenarios)
	whole := ok
	whole.Cells, whole.Run = nil, nil
	whole.Whole = func(context.Context, Config) ([]Row, error) { return nil, nil }
	if err := checkDeclaration(whole); err != nil {
		t.Errorf("Whole only: %v", err)
	}
}
