package escape

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// texReplacer escapes LaTeX's special characters and maps the Greek and
// math symbols used in table headers to math mode.
var texReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`,
	"{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	"α̂", `$\hat\alpha$`, "α", `$\alpha$`, "β", `$\beta$`, "γ", `$\gamma$`, "π", `$\pi$`, "±", `$\pm$`,
	"‖", `$\|$`, "≤", `$\le$`, "≥", `$\ge$`, "×", `$\times$`, "−", `$-$`, "Σ", `$\Sigma$`,
	"✓", `yes`, "✗", `\textbf{no}`, "…", `\dots{}`, "†", `$^\dagger$`, "‡", `$^\ddagger$`, "–", `--`,
	"λ", `$\lambda$`, "δ", `$\delta$`, "ε", `$\epsilon$`, "η", `$\eta$`, "ρ", `$\rho$`, "σ", `$\sigma$`, "τ", `$\tau$`,
	"µ", `$\mu$`, "μ", `$\mu$`, "Ẑ", `$\hat Z$`, "Z\u0302", `$\hat Z$`, "²", `$^2$`, "³", `$^3$`, "∋", `$\ni$`, "∞", `$\infty$`,
	"≈", `$\approx$`, "→", `$\to$`, "χ", `$\chi$`)

// TeX returns s as LaTeX text: \ & % $ # _ { } ~ ^ escaped (so no command
// or group can open), control characters, line breaks and invalid UTF-8
// as spaces (a blank line would end a macro's argument), and the symbols of table headers (α̂, γ, ±, ≤, …) in math mode.
func TeX(s string) string {
	return texReplacer.Replace(controlsTo(s, " "))
}

// mdReplacer escapes what Markdown or HTML would read as markup ('_'
// aside: see Markdown).
var mdReplacer = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "[", `\[`, "]", `\]`, "|", `\|`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;")

// Markdown returns s as literal Markdown text that also stays literal
// when the Markdown is rendered to HTML: HTML's < > & as entities (no
// tag, comment or entity can open), Markdown's \ ` * _ [ ] escaped (no
// code span, emphasis, link or image), | escaped (a table cell stays one
// cell), and control characters and line breaks as spaces (a value
// stays on its line). An underscore inside a word (mean_emitted), which
// cannot open emphasis in CommonMark, stays as it is; one at a word's edge
// is escaped.
func Markdown(s string) string {
	s = mdReplacer.Replace(controlsTo(s, " "))
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	prev := ' '
	for i, r := range s {
		if r == '_' {
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if !word(prev) || !word(next) {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// Terminal returns s with every character a terminal would act on shown
// as a visible escape instead: C0 controls other than tab and newline,
// DEL and C1 controls (\x1b, \x7f, \u009b), the Unicode bidirectional
// controls (\u202e, \u2066, …) and the bytes of invalid UTF-8 (\xff). A
// backslash stays as it is. Use it on any string from input before it is
// written to stdout or stderr as text.
func Terminal(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeTerminal(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeTerminal(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Line returns s as Terminal does, with line breaks also shown as escapes
// (\x0a, and Unicode's line and paragraph separators as \u2028 and
// \u2029): for a value from input printed inside a line of text (an
// external implementation's name, a message it sent), where a newline
// would start a line of its own, such as a forged "verdict:" line.
func Line(s string) string {
	s = lineSeparators.Replace(s)
	if !strings.ContainsRune(s, '\n') {
		return Terminal(s)
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Terminal(p)
	}
	return strings.Join(parts, `\x0a`)
}

// lineSeparators shows Unicode's line and paragraph separators as escapes.
var lineSeparators = strings.NewReplacer("\u2028", `\u2028`, "\u2029", `\u2029`)

// MaxLine is the longest line, in bytes, that Clip leaves whole: an error
// or warning line that echoes input (a flag value, a file's field) stays
// readable whatever the input's size (lines of 1 to 2.8 MB were printed).
const MaxLine = 2048

// Clip returns s when it has at most max bytes; otherwise its first two
// thirds of max and its last sixth (the fix an error ends with), cut at
// character boundaries, around " … [N of M bytes left out] … ".
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*2/3, max/6
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	t := len(s) - tail
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return fmt.Sprintf("%s … [%d of %d bytes left out] … %s", s[:head], t-head, len(s), s[t:])
}

// isClean reports whether Terminal would return s unchanged.
func isClean(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || unsafeTerminal(r) {
			return false
		}
		i += n
	}
	return true
}

// unsafeTerminal reports whether a terminal acts on r instead of showing
// it: a control character other than tab and newline, or a bidirectional
// control.
func unsafeTerminal(r rune) bool {
	if r == '\t' || r == '\n' {
		return false
	}
	return unicode.IsControl(r) || bidi(r)
}

// bidi reports whether r is a Unicode bidirectional control (embeddings,
// overrides, isolates and marks), which reorder the text shown around
// them.
func bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// controlsTo replaces every control character (tab and line breaks
// included), bidirectional control and invalid UTF-8 byte of s with sp.
func controlsTo(s, sp string) string {
	ok := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || unicode.IsControl(r) || bidi(r) {
			ok = false
			break
		}
		i += n
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || unicode.IsControl(r) || bidi(r) {
			b.WriteString(sp)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// JSON returns JSON text (as encoding/json writes it: valid UTF-8, C0
// controls already escaped) with the characters a terminal acts on that
// encoding/json leaves raw (DEL, C1 controls, bidirectional controls)
// written as \u escapes: the same JSON value, safe to print. They can
// occur only inside strings, where \u escapes mean the same character.
func JSON(b []byte) []byte {
	if isClean(string(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError && unsafeTerminal(r) && r != '\r' && !(r < 0x20) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// TerminalWriter returns a writer that passes everything written to it
// through Terminal: for a command's text output, whose lines quote input
// (names, values, an external implementation's messages). Each Write is
// escaped on its own, so write whole lines.
func TerminalWriter(w io.Writer) io.Writer { return terminalWriter{w} }

type terminalWriter struct{ w io.Writer }

func (t terminalWriter) Write(b []byte) (int, error) {
	s := string(b)
	if isClean(s) {
		return t.w.Write(b)
	}
	if _, err := io.WriteString(t.w, Terminal(s)); err != nil {
		return 0, err
	}
	return len(b), nil
}
