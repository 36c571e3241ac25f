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

// Every table of the main job renders to LaTeX in ASCII alone: a
// character the escaping misses (a Greek letter, a superscript) stops
// pdfLaTeX with "Unicode character not set up" even with inputenc.
func TestTablesLaTeXASCII(t *testing.T) {
	b, err := LoadBundle(tiny(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range Tables(b) {
		for i, r := range tab.LaTeX() {
			if r > 127 {
				t.Errorf("table %s: %q at byte %d is not escaped for LaTeX", tab.Name, r, i)
				break
			}
		}
	}
}
