// Package paper holds the LaTeX source of the specsim paper (paper.tex),
// embedded so that 'report paper' and 'report reproduce' can write it next
// to its generated inputs. Every figure, table and quoted number of the
// paper is an \input or \includegraphics of a file under generated/, which
// 'report paper RESULTS' regenerates from the results, so the text cannot
// drift from them:
//
//	generated/numbers.tex      \newcommand macros for every number quoted
//	generated/provenance.tex   the revision, the command and its date
//	generated/figures/*.pdf    the figures (plots package)
//	generated/tables/*.tex     booktabs tables
//
// refs.bib is the bibliography (natbib, plainnat), written beside paper.tex.
//
// Build: go run ./cmd/report paper results --out paper && (cd paper && latexmk -pdf paper.tex)
package paper // import "github.com/specsim/specsim/paper"

import _ "embed"

// Source is paper.tex.
//
//go:embed paper.tex
var Source string

// Bib is refs.bib, the BibTeX database of every paper the paper cites; it
// is written next to paper.tex.
//
//go:embed refs.bib
var Bib string

// CaseStudy is casestudy.tex, the section on public samplers checked at
// buggy and fixed commits that paper.tex inputs; it is written beside
// paper.tex, and its table is generated/tables/casestudy.tex.
//
//go:embed casestudy.tex
var CaseStudy string
