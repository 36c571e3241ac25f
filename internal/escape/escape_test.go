package escape

import (
	"strings"
	"testing"
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
