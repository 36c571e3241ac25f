package plots

import (
	"slices"
	"testing"

	"github.com/specsim/specsim/table"
)

// smcRows are smc-steering rows as the experiment writes them (values
// from a seed-1 run of the forbid+end+expert model, rounded), with a
// planted bug that the figure must leave out and a zero it cannot draw.
func smcRows() []table.Row {
	var rows []table.Row
	add := func(scheme string, k int64, mutant bool, rv, tv []float64) {
		for i, n := range []int64{8, 64} {
			rows = append(rows, table.Row{{K: "model", V: "forbid+end+expert"}, {K: "scheme", V: scheme}, {K: "k", V: k}, {K: "n", V: n},
				{K: "mutant", V: mutant}, {K: "relative_variance", V: rv[i]}, {K: "posterior_tv", V: tv[i]}})
		}
	}
	add("fc", 2, false, []float64{0.0957, 0.0127}, []float64{0.2547, 0.0826})
	add("fc", 4, false, []float64{0.0978, 0.012}, []float64{0.2608, 0.0846})
	add("is", 1, false, []float64{0.1193, 0.0146}, []float64{0.2778, 0.0862})
	add("multinomial", 2, false, []float64{0.1442, 0.019}, []float64{0.3819, 0.1514})
	add("mutant-alpha-idet", 2, true, []float64{0, 0}, []float64{0.5, 0.5})
	add("systematic", 2, false, []float64{0, 0.0138}, []float64{0.283, 0.1012})
	return rows
}

// TestSMCSteering: the figure has a column of two panels per K, one
// legend entry per correct scheme in the fixed order, leaves the planted
// bug out, reads (labelled log ticks), renders, and names a missing
// model.
func TestSMCSteering(t *testing.T) {
	f, err := SMCSteering(smcRows(), "forbid+end+expert", "smc-x")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fc", "is", "multinomial", "systematic"}
	if got := f.LegendNames(); !slices.Equal(got, want) || len(f.Panels) != 6 || f.GridCols != 3 {
		t.Errorf("legend %v with %d panels in %d columns; want %v with 6 in 3 (K = 1, 2, 4)", got, len(f.Panels), f.GridCols, want)
	}
	for _, p := range f.Problems() {
		t.Error(p)
	}
	if _, err := f.Render("png"); err != nil {
		t.Fatal(err)
	}
	if _, err := SMCSteering(smcRows(), "nope", "smc-x"); err == nil {
		t.Error("a missing model gave no error")
	}
	if _, err := SMCSteering(nil, "forbid+end+expert", "smc-x"); err == nil {
		t.Error("no rows gave no error")
	}
}
