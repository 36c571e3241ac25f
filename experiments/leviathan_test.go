package experiments

import (
	"context"
	"math"
	"strings"
	"testing"
)

func runNamed(t *testing.T, name string, cfg Config) []Row {
	t.Helper()
	e, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := RunAll(context.Background(), e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func num(t *testing.T, r Row, k string) float64 {
	t.Helper()
	v, ok := r.Float(k)
	if !ok {
		t.Fatalf("row %v has no numeric column %s", r, k)
	}
	return v
}

// TestLeviathanTable1Experiment: every cell of Leviathan et al. Table 1
// (arXiv 2211.17192) is reproduced to the printed precision.
func TestLeviathanTable1Experiment(t *testing.T) {
	rows := runNamed(t, "leviathan-table1", Config{Seed: 1})
	want := map[[2]float64][2]string{ // (alpha, gamma) → (ops, speed), Table 1
		{0.6, 2}: {"1.53X", "1.96X"}, {0.7, 3}: {"1.58X", "2.53X"}, {0.8, 2}: {"1.23X", "2.44X"},
		{0.8, 5}: {"1.63X", "3.69X"}, {0.9, 2}: {"1.11X", "2.71X"}, {0.9, 10}: {"1.60X", "6.86X"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		k := [2]float64{num(t, r, "alpha"), num(t, r, "gamma")}
		w, ok := want[k]
		if !ok {
			t.Fatalf("unexpected row %v", r)
		}
		if r.String("ops_printed") != w[0] || r.String("speed_printed") != w[1] || r.String("matches") != "true" {
			t.Errorf("α=%g γ=%g: ops %s speed %s, paper %s %s", k[0], k[1], r.String("ops_printed"), r.String("speed_printed"), w[0], w[1])
		}
		delete(want, k)
	}
}

// leviathan-table1's declared table shows Table 1 to the printed
// precision of Leviathan et al. (2211.17192, Table 1), every cell marked
// as matching.
func TestLeviathanTable1Text(t *testing.T) {
	e, _ := Lookup("leviathan-table1")
	md := e.Tables[0].Make(runNamed(t, e.Name, Config{Seed: 1, Scale: 1})).Markdown()
	for _, line := range []string{"| 0.6 | 2 | 1.960 | 1.53X | 1.96X | 1.53X | 1.96X | ✓ |"} {
		if !strings.Contains(md, line) {
			t.Errorf("Table 1 lacks %q:\n%s", line, md)
		}
	}
	if strings.Contains(md, "✗") {
		t.Errorf("a Table 1 cell does not match:\n%s", md)
	}
}

// TestLeviathanTokensExperiment: with constant β the exact engine's token
// verification equals Eq. 1, and block verification beats it from γ = 2.
func TestLeviathanTokensExperiment(t *testing.T) {
	rows := runNamed(t, "leviathan-tokens", Config{Seed: 1})
	if len(rows) != 5*8 {
		t.Fatalf("%d rows, want 40", len(rows))
	}
	for _, r := range rows {
		if d := num(t, r, "token_minus_eq1"); math.Abs(d) > 1e-12 {
			t.Errorf("α=%g γ=%g: token exact - Eq. 1 = %g", num(t, r, "alpha"), num(t, r, "gamma"), d)
		}
		g, gain := num(t, r, "gamma"), num(t, r, "block_gain_pct")
		if (g == 1 && math.Abs(gain) > 1e-10) || (g >= 2 && !(gain > 0)) {
			t.Errorf("α=%g γ=%g: block gain %g%%", num(t, r, "alpha"), g, gain)
		}
	}
}

// TestLeviathanWalltimeExperiment: one best γ per cell, consistent with the
// rows; α = 0.8, c = 0.05 has its optimum at γ = 8 (S = 3.0921, by hand in
// algos.TestBestGamma).
func TestLeviathanWalltimeExperiment(t *testing.T) {
	rows := runNamed(t, "leviathan-walltime", Config{Seed: 1})
	type key struct{ a, c float64 }
	best := map[key]int{}
	maxS := map[key]float64{}
	for _, r := range rows {
		k := key{num(t, r, "alpha"), num(t, r, "c")}
		if r.String("is_best") == "true" {
			best[k]++
			if num(t, r, "walltime") != num(t, r, "best_walltime") {
				t.Errorf("%v: best row's walltime differs from best_walltime", k)
			}
		}
		maxS[k] = math.Max(maxS[k], num(t, r, "walltime"))
		if k == (key{0.8, 0.05}) && (num(t, r, "best_gamma") != 8 || math.Abs(num(t, r, "best_walltime")-3.0921) > 1e-4) {
			t.Errorf("α=0.8 c=0.05: best γ %g S %g", num(t, r, "best_gamma"), num(t, r, "best_walltime"))
		}
	}
	if len(best) != 16 {
		t.Errorf("%d cells with a best row, want 16", len(best))
	}
	for k, n := range best {
		if n != 1 {
			t.Errorf("%v: %d best rows", k, n)
		}
	}
}
