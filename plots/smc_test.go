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

// TestSMCSteering: the figure has both panels, one legend entry per
// correct scheme in the fixed order plus one per K, leaves the planted
// bug out, renders, and names a missing model.
func TestSMCSteering(t *testing.T) {
	f, err := SMCSteering(smcRows(), "forbid+end+expert")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fc", "is", "multinomial", "systematic", "K = 1", "K = 2", "K = 4"}
	if got := f.LegendNames(); !slices.Equal(got, want) || len(f.Panels) != 2 {
		t.Errorf("legend %v with %d panels; want %v with 2", got, len(f.Panels), want)
	}
	if _, err := f.Render("png"); err != nil {
		t.Fatal(err)
	}
	if _, err := SMCSteering(smcRows(), "nope"); err == nil {
		t.Error("a missing model gave no error")
	}
	if _, err := SMCSteering(nil, "forbid+end+expert"); err == nil {
		t.Error("no rows gave no error")
	}
}
