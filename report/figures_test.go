package report

import (
	"testing"
)

// Every figure of the main job reads: legend entries told apart, log
// axes with enough labelled ticks, bands explained (plots.Figure.Problems).
func TestFiguresReadable(t *testing.T) {
	b, err := LoadBundle(tiny(t))
	if err != nil {
		t.Fatal(err)
	}
	figs, err := Figures(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		for _, p := range f.Problems() {
			t.Error(p)
		}
	}
}
