package escape

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// Injected markup comes out as text in each medium.
func TestTeX(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"1", "1"},
		{`1}\immediate\openout5=pwn.tex`, `1\}\textbackslash{}immediate\textbackslash{}openout5=pwn.tex`},
		{"a\n\nb\r\x1bc", "a  b  c"},
		{"50% of $x_1$ & #2 {~^}", `50\% of \$x\_1\$ \& \#2 \{\textasciitilde{}\textasciicircum{}\}`},
		{"α̂ ‖ max |π−p| ×", `$\hat\alpha$ $\|$ max |$\pi$$-$p| $\times$`},
		{"bad\xffutf8", "bad utf8"},
		{"per-position χ²", `per-position $\chi$$^2$`},
	} {
		if got := TeX(c.in); got != c.want {
			t.Errorf("TeX(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// no unescaped backslash, brace or line break survives any input
	for _, in := range []string{`\input{/etc/passwd}`, "\\\\", "}{", "\\csname\n\n\\endcsname"} {
		got := strings.ReplaceAll(strings.ReplaceAll(TeX(in), `\textbackslash{}`, ""), `\{`, "")
		got = strings.ReplaceAll(got, `\}`, "")
		if strings.ContainsAny(got, "\\{}\n") {
			t.Errorf("TeX(%q) = %q keeps markup", in, TeX(in))
		}
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"abc-1.5e-3", "abc-1.5e-3"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"[x](javascript:alert(1))", `\[x\](javascript:alert(1))`},
		{"![i](http://e/x.png)", `!\[i\](http://e/x.png)`},
		{"a|b\n## c", `a\|b ## c`},
		{"`code` *em* _u_ \\ &amp;", "\\`code\\` \\*em\\* \\_u\\_ \\\\ &amp;amp;"},
		{"mean_emitted __init__ a_ _b", "mean_emitted \\_\\_init\\_\\_ a\\_ \\_b"},
	} {
		if got := Markdown(c.in); got != c.want {
			t.Errorf("Markdown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTerminal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"plain café\tx\ny", "plain café\tx\ny"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},
		{"a\rb\x7f", `a\x0db\x7f`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"raw\xff\xfe", `raw\xff\xfe`},
		{`back\slash`, `back\slash`},
	} {
		if got := Terminal(c.in); got != c.want {
			t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// nameAlphabet is the generator of hostile names of issue 30 (M1): every
// character class a terminal or a line-oriented reader acts on, alone,
// repeated and mixed with text, and a very long name.
func nameAlphabet() []string {
	atoms := []string{"\n", "\r", "\r\n", "\x00", "\x1b[2J", "\x1b]0;t\x07", "\x7f", "\u009b", "\u202e", "\u2066", "\u200f", "\u061c",
		"\xff", "\xc3", "\x85", "\u2028", "\u2029", "\t", "\x0b", "\x0c", "\x08"}
	var out []string
	for _, a := range atoms {
		out = append(out, a, "fake"+a+"verdict: not_detected", a+a+a, "m:"+a+"f"+a)
	}
	out = append(out, strings.Repeat("\nverdict: not_detected ", 50000), "ok:name", "café ✓ α̂")
	return out
}

// TestLine: over the name alphabet, Line's result holds no line break
// and nothing a terminal acts on (Terminal leaves it as it is), and text
// without such characters is unchanged.
func TestLine(t *testing.T) {
	t.Parallel()
	for _, s := range nameAlphabet() {
		got := Line(s)
		if strings.ContainsAny(got, "\n\r\u2028\u2029") || Terminal(got) != got {
			t.Errorf("Line(%.40q) = %.60q: a line break or control survives", s, got)
		}
		if isClean(s) && !strings.ContainsAny(s, "\n\u2028\u2029") && got != s {
			t.Errorf("Line(%q) = %q changed clean text", s, got)
		}
	}
	if got := Line("a\nverdict: x\x1b[0m"); got != `a\x0averdict: x\x1b[0m` {
		t.Errorf("Line = %q", got)
	}
}

// TestClip: a line longer than the bound keeps its head and tail whole
// characters and says how many bytes it left out, within the bound plus
// the marker; a line within the bound is unchanged.
func TestClip(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, MaxLine - 1, MaxLine, MaxLine + 1, 3 * MaxLine, 2_800_000} {
		for _, unit := range []string{"x", "é", "✓", "\U0001F600"} {
			s := strings.Repeat(unit, (n+len(unit)-1)/len(unit)) // n bytes or just over
			got := Clip(s, MaxLine)
			if len(s) <= MaxLine {
				if got != s {
					t.Errorf("Clip of %d bytes changed it", len(s))
				}
				continue
			}
			if len(got) > MaxLine+64 || !utf8.ValidString(got) || !strings.Contains(got, fmt.Sprintf(" of %d bytes left out] … ", len(s))) {
				t.Errorf("Clip of %d bytes of %q: %d bytes, valid %v, %.80q", len(s), unit, len(got), utf8.ValidString(got), got)
			}
		}
	}
}
