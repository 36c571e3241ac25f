package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// LogProblems finds every warning and box report in a LaTeX log (joining
// a warning's continuation line) but not a package's banner; FloatPlacement
// finds floats set more than a page from every reference to them and
// floats never referenced.
func TestLayoutProblems(t *testing.T) {
	dir := t.TempDir()
	log := `This is pdfTeX, Version 3.141592653
Package: infwarerr 2019/12/03 v1.5 Providing info/warning/error messages (HO)
LaTeX Warning: Float too large for page by 116.9pt on input line 754.

Overfull \hbox (41.9pt too wide) in paragraph at lines 1--754
Underfull \vbox (badness 10000) has occurred while \output is active []
Package natbib Warning: Citation ` + "`x'" + ` on page 1 undefined on input line 3
(natbib)                on input line 3.
pdfTeX warning (dest): name{figure.3} has been referenced but does not exist
[1] [2]
`
	aux := `\relax
\floatrefpage{fig:a}{3}
\newlabel{fig:a}{{1}{4}{A caption}{figure.caption.1}{}}
\floatrefpage{fig:b}{2}
\floatrefpage{fig:b}{9}
\newlabel{fig:b}{{2}{5}{B}{figure.caption.2}{}}
\newlabel{tab:c}{{1}{5}{C}{table.caption.3}{}}
\floatrefpage{tab:d}{7}
\newlabel{tab:d}{{2}{6}{D}{table.caption.4}{}}
\newlabel{sec:intro}{{1}{1}{Introduction}{section.1}{}}
`
	for name, text := range map[string]string{"paper.log": log, "paper.aux": aux} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LogProblems(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"LaTeX Warning: Float too large for page by 116.9pt on input line 754.",
		`Overfull \hbox (41.9pt too wide) in paragraph at lines 1--754`,
		`Underfull \vbox (badness 10000) has occurred while \output is active []`,
		"Package natbib Warning: Citation `x' on page 1 undefined on input line 3 (natbib)                on input line 3.",
		"pdfTeX warning (dest): name{figure.3} has been referenced but does not exist",
	}
	if !slices.Equal(got, want) {
		t.Errorf("LogProblems:\n%q\nwant\n%q", got, want)
	}
	got, err = FloatPlacement(dir)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"fig:b is on page 5, its references on pages [2 9]",
		`tab:c (page 5) is never referenced with \figref or \tabref`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("FloatPlacement:\n%q\nwant\n%q", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "paper.aux"), []byte(`\relax`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FloatPlacement(dir); err == nil {
		t.Error("an aux without float labels passed; want an error")
	}
}
