package experiments

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/specsim/specsim/table"
)

// TestThroughputTables runs every throughput cell at a tiny scale (its
// timings then only show that the code runs) and checks the rows and the
// two tables: a positive CPU and wall time and rate per rule and setting,
// tokens emitted per step within [1, γ+1] (per tree within [1, depth+1]),
// and one table row per rule with a number of µs in every setting's
// column that is the row's CPU time to three significant digits (without
// an exponent), followed by the runs' range, which holds it: throughputReps
// runs per row, the median within [cpu_ns_lo, cpu_ns_hi], and the load
// average recorded.
func TestThroughputTables(t *testing.T) {
	e, err := Lookup("throughput")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Seed: 1, Scale: 0.01, Workers: 1}
	cells, err := e.Cells(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(throughputVs) + len(throughputGs) - 1 + len(throughputKs); len(cells) != want {
		t.Fatalf("%d cells, want %d", len(cells), want)
	}
	var all []Row
	for _, c := range cells {
		rows, err := e.Run(context.Background(), cfg, c, CellSeed(cfg.Seed, e.Name, c))
		if err != nil {
			t.Fatal(err)
		}
		key := Row(c.Key)
		top := table.Num(key, "gamma") + 1
		if want := len(throughputChain); key.String("kind") == "tree" {
			want = len(throughputTree)
			if len(rows) != want {
				t.Fatalf("%v: %d rows, want %d", c.Key, len(rows), want)
			}
		} else if len(rows) != want {
			t.Fatalf("%v: %d rows, want %d", c.Key, len(rows), want)
		}
		for _, r := range rows {
			for _, k := range []string{"ns_per_step", "cpu_ns_per_step", "steps_per_second"} {
				if v := table.Num(r, k); !(v > 0) {
					t.Errorf("%v %s: %s = %g, want > 0", c.Key, r.String("rule"), k, v)
				}
			}
			lo, med, hi := table.Num(r, "cpu_ns_lo"), table.Num(r, "cpu_ns_per_step"), table.Num(r, "cpu_ns_hi")
			if table.Num(r, "reps") != throughputReps || !(lo <= med && med <= hi) {
				t.Errorf("%v %s: %g runs, median %g outside [%g, %g]", c.Key, r.String("rule"), table.Num(r, "reps"), med, lo, hi)
			}
			if l := table.Num(r, "load"); !(l >= 0) {
				t.Errorf("%v %s: load average %g", c.Key, r.String("rule"), l)
			}
			if em := table.Num(r, "emitted_per_step"); !(em >= 1 && em <= top) {
				t.Errorf("%v %s: %g emitted per step, want within [1, %g]", c.Key, r.String("rule"), em, top)
			}
			all = append(all, append(append(Row{}, c.Key...), r...))
		}
	}
	chain := throughputTable(all)
	if len(chain.Rows) != len(throughputChain) || len(chain.Header) != 1+len(throughputVs)+len(throughputGs)-1 {
		t.Fatalf("chain table %d rows, header %q", len(chain.Rows), chain.Header)
	}
	tok := append([]string{}, chain.Rows[0]...)
	tok[1], _, _ = strings.Cut(tok[1], " ")
	want := table.Num(table.Find(all, "kind", "chain", "rule", "token", "V", "1000", "gamma", "4"), "cpu_ns_per_step") / 1e3
	if got, err := strconv.ParseFloat(tok[1], 64); tok[0] != "token" || err != nil || math.Abs(got-want) > 0.005*want {
		t.Errorf("token at V = 1000: %q, want %.3g", tok[:2], want)
	}
	for _, line := range chain.Rows {
		for _, cell := range line[1:] {
			if v, lo, hi, err := parseRange(cell); err != nil || !(lo <= v && v <= hi && lo > 0) || math.IsInf(v, 0) {
				t.Errorf("chain table row %q: cell %q is not a positive time in its range", line[0], cell)
			}
		}
	}
	trees := throughputTreeTable(all)
	if len(trees.Rows) != len(throughputTree) || len(trees.Header) != 1+len(throughputKs) {
		t.Fatalf("tree table %d rows, header %q", len(trees.Rows), trees.Header)
	}
	for _, line := range trees.Rows {
		for _, cell := range line[1:] {
			if v, lo, hi, err := parseRange(cell); err != nil || !(lo <= v && v <= hi) {
				t.Errorf("tree table row %q: cell %q is not a time in its range", line[0], cell)
			}
		}
	}
	if got := microseconds(nil); got != NA {
		t.Errorf("microseconds(nil) = %q, want %q", got, NA)
	}
	for ns, want := range map[float64]string{848: "0.848", 6041: "6.04", 127130: "127", 4487818: "4488", 1e9: "1000000"} {
		if got := microseconds(Row{{K: "cpu_ns_per_step", V: ns}}); got != want {
			t.Errorf("microseconds(%g ns) = %q, want %q", ns, got, want)
		}
	}
}

// parseRange reads a table cell "6.04 (5.90–6.31)": the median and the
// runs' smallest and largest.
func parseRange(cell string) (v, lo, hi float64, err error) {
	m, rest, _ := strings.Cut(cell, " (")
	l, h, _ := strings.Cut(strings.TrimSuffix(rest, ")"), "–")
	if v, err = strconv.ParseFloat(m, 64); err != nil {
		return
	}
	if lo, err = strconv.ParseFloat(l, 64); err != nil {
		return
	}
	hi, err = strconv.ParseFloat(h, 64)
	return
}
