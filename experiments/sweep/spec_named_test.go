package sweep_test

import (
	"context"
	"strings"
	"testing"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/experiments/sweep"
)

// toy is a named experiment as other issues register them: its own grid,
// a Run that reads its cell key.
func init() {
	experiments.Register(experiments.Experiment{
		Name: "toy-sweep-test", Summary: "test experiment: y = a·b",
		Cells: func(experiments.Config) ([]experiments.Cell, error) {
			var cells []experiments.Cell
			for _, a := range []int64{1, 2} {
				cells = append(cells, experiments.Cell{Key: []experiments.KV{{K: "a", V: a}, {K: "b", V: 0.5}}})
			}
			return cells, nil
		},
		Run: func(_ context.Context, _ experiments.Config, c experiments.Cell, seed uint64) ([]experiments.Row, error) {
			var a int64
			var b float64
			for _, kv := range c.Key {
				switch kv.K {
				case "a":
					a = kv.V.(int64)
				case "b":
					b = kv.V.(float64)
				}
			}
			return []experiments.Row{{{K: "y", V: float64(a) * b}, {K: "seed_low", V: int64(seed % 1000)}}}, nil
		},
	})
}

// A spec overrides a named experiment's grid with axes named like its
// cell keys; cell seeds agree with the named run for the same cells.
func TestSpecOverridesNamedExperiment(t *testing.T) {
	def, _ := sweep.DefaultSpec("toy-sweep-test")
	pd, err := sweep.NewPlan(def, 9)
	if err != nil {
		t.Fatal(err)
	}
	named, err := pd.Run(context.Background(), sweep.Options{})
	if err != nil || len(named.Rows) != 2 {
		t.Fatalf("named run: %v %v", named.Rows, err)
	}
	s, err := sweep.ParseSpec("experiment = \"toy-sweep-test\"\nmetrics = [\"y\"]\n[axes]\na = [1, 2, 3]\nb = 0.5\n")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sweep.NewPlan(s, 9)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(res.Rows))
	}
	if y, _ := res.Rows[2].Float("y"); y != 1.5 {
		t.Errorf("cell a=3: y = %g, want 1.5", y)
	}
	if _, ok := res.Rows[0].Get("seed_low"); ok {
		t.Error("metric seed_low kept although the spec names only y")
	}
	// Same cell, same seed: the spec's cell a=1,b=0.5 is the named run's.
	all, _ := sweep.ParseSpec("experiment = \"toy-sweep-test\"\n[axes]\na = [2, 1]\nb = 0.5\n")
	pa, _ := sweep.NewPlan(all, 9)
	ra, err := pa.Run(context.Background(), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ra.Rows[1].String("seed_low"), named.Rows[0].String("seed_low"); got != want || got == "" {
		t.Errorf("cell a=1: seed_low %s from the spec, %s from the named run", got, want)
	}
	if _, err := sweep.ParseSpec("experiment = \"toy-sweep-test\"\n[axes]\nc = [1]\n"); err == nil ||
		!strings.Contains(err.Error(), `unknown axis "c" for experiment toy-sweep-test; its axes are a, b`) {
		t.Errorf("unknown axis: %v", err)
	}
	bad, _ := sweep.ParseSpec("experiment = \"toy-sweep-test\"\nmetrics = [\"z\"]\n[axes]\na = [1]\nb = 0.5\n")
	pb, _ := sweep.NewPlan(bad, 9)
	if _, err := pb.Run(context.Background(), sweep.Options{}); err == nil || !strings.Contains(err.Error(), `field metrics: "z" is not a column of experiment toy-sweep-test`) {
		t.Errorf("unknown metric of a named experiment: %v", err)
	}
}
