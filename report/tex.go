package report

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/specsim/specsim/internal/escape"
)

// texMacro is one \newcommand of a generated .tex file (numbers.tex,
// provenance.tex). Value is text from anywhere (a results file's
// metadata, a computed number): texFile escapes it. Code sets it in
// typewriter type (\texttt) with '--' kept as two hyphens. Doc becomes a
// comment after the definition.
type texMacro struct {
	Name, Value, Doc string
	Code             bool
}

// texNumber is the TeX a number of the paper is rendered as
// (table.Number.Eval: 12, -0.512, +Inf, $1.2\times10^{-3}$): the only
// markup a value may carry into a generated file unescaped, because it
// can hold no command but \times and no group but the exponent's.
var texNumber = regexp.MustCompile(`^[-+]?([0-9]+(\.[0-9]+)?|Inf)$|^\$-?[0-9]\.[0-9]\\times10\^\{-?[0-9]{1,3}\}\$$`)

// texFile is the one writer of generated .tex files: a header comment,
// then each macro as \newcommand{\Name}{Value}% Doc, one a line. Every
// interpolated value is escaped (escape.TeX) unless it is a number of
// the form texNumber; a comment loses its line breaks (which would end
// it) and its '%'. A macro name that is not letters is a bug in this
// program (macros are named in its code), so it panics.
func texFile(header string, ms []texMacro) string {
	var s strings.Builder
	s.WriteString("% " + texComment(header) + "\n")
	for _, m := range ms {
		if !macroName.MatchString(m.Name) {
			panic("paper: macro name " + m.Name)
		}
		v := m.Value
		if !texNumber.MatchString(v) {
			v = escape.TeX(v)
		}
		if m.Code {
			v = `\texttt{` + strings.ReplaceAll(v, "--", "-{}-") + `}`
		}
		fmt.Fprintf(&s, "\\newcommand{\\%s}{%s}", m.Name, v)
		if m.Doc != "" {
			s.WriteString("% " + texComment(m.Doc))
		}
		s.WriteString("\n")
	}
	return s.String()
}

// texComment is s made safe after a '%': no line break (the comment would
// end and the rest be read as TeX) and '%' escaped, as before.
func texComment(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	return strings.ReplaceAll(s, "%", `\%`)
}
