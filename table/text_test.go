package table

import (
	"math"
	"strings"
	"testing"
)

func TestTextFormats(t *testing.T) {
	tab := Text{Name: "t", Header: []string{"rule", "α", "p_value"}, Right: []bool{false, true, true},
		Rows: [][]string{{"token", "0.700", "5%"}, {"a|b", "✓", "–"}, {"<b>x</b>\n[l](u)", "}\\input{y}", ""}}}
	// a cell is text in every medium: Markdown/HTML and LaTeX markup
	// from a cell is escaped (internal/escape)
	md := "| rule | α | p_value |\n|---|---:|---:|\n| token | 0.700 | 5% |\n| a\\|b | ✓ | – |\n| &lt;b&gt;x&lt;/b&gt; \\[l\\](u) | }\\\\input{y} |  |\n"
	if got := tab.Markdown(); got != md {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, md)
	}
	tex := "\\begin{tabular}{lrr}\n\\toprule\nrule & $\\alpha$ & p\\_value \\\\\n\\midrule\n" +
		"token & 0.700 & 5\\% \\\\\na|b & yes & -- \\\\\n<b>x</b> [l](u) & \\}\\textbackslash{}input\\{y\\} &  \\\\\n\\bottomrule\n\\end{tabular}\n"
	if got := tab.LaTeX(); got != tex {
		t.Errorf("LaTeX:\n%s\nwant:\n%s", got, tex)
	}
	csvText := "rule,α,p_value\ntoken,0.700,5%\na|b,✓,–\n\"<b>x</b>\n[l](u)\",}\\input{y},\n"
	if got := tab.CSV(); got != csvText {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, csvText)
	}
	// headers of the real tables must come out as ASCII LaTeX
	if got := texEscape("α̂ ‖ max |π−p| ×"); got != `$\hat\alpha$ $\|$ max |$\pi$$-$p| $\times$` {
		t.Errorf("texEscape: %q", got)
	}
	if got := texEscape("λ Ẑ/Z² ∋ 1, Z\u0302"); got != `$\lambda$ $\hat Z$/Z$^2$ $\ni$ 1, $\hat Z$` {
		t.Errorf("texEscape: %q", got)
	}
	if got := RightCols(4, 1, 3); len(got) != 4 || got[0] || !got[1] || got[2] || !got[3] {
		t.Errorf("RightCols(4, 1, 3) = %v", got)
	}
}

func TestFixed(t *testing.T) {
	for _, c := range []struct {
		v    float64
		d    int
		want string
	}{{-2.2e-16, 3, "0.000"}, {-0.0004, 3, "0.000"}, {-0.0006, 3, "-0.001"}, {-3, 0, "-3"}, {-0.4, 0, "0"}, {math.NaN(), 2, "n/a"}, {math.Inf(1), 2, "+Inf"}} {
		if got := Fixed(c.v, true, c.d); got != c.want {
			t.Errorf("Fixed(%g, %d) = %q, want %q", c.v, c.d, got, c.want)
		}
	}
	if got := Fixed(1, false, 2); got != "n/a" {
		t.Errorf("Fixed(not ok) = %q", got)
	}
}

// Each aggregate on hand-counted rows: the filter compares text and
// accepts "a|b"; Negative ignores round-off above −NegativeTol.
func TestNumberEval(t *testing.T) {
	rows := []Row{
		{{K: "rule", V: "token"}, {K: "g", V: int64(4)}, {K: "x", V: 0.25}, {K: "d", V: -2e-16}},
		{{K: "rule", V: "block"}, {K: "g", V: int64(4)}, {K: "x", V: -0.0031}, {K: "d", V: -0.01}},
		{{K: "rule", V: "greedy"}, {K: "g", V: int64(2)}, {K: "x", V: 1.5}, {K: "d", V: -1e-8}},
	}
	for _, c := range []struct {
		n    Number
		want string
	}{
		{Number{Where: []string{"rule", "block"}, Col: "x", Digits: 3}, "-0.003"},
		{Number{Where: []string{"rule", "nope"}, Col: "x", Digits: 3}, "n/a"},
		{Number{Where: []string{"g", "4"}, Agg: Count}, "2"},
		{Number{Where: []string{"rule", "token|greedy"}, Agg: Count}, "2"},
		{Number{Agg: MaxAbs, Col: "x"}, `$1.5\times10^{0}$`},
		{Number{Where: []string{"rule", "nope"}, Agg: MaxAbs, Col: "x"}, "n/a"},
		{Number{Agg: Negative, Col: "d"}, "2"},
		{Number{Agg: Max, Col: "x", Digits: 1}, "1.5"},
		{Number{Where: []string{"g", "4"}, Agg: Max, Col: "x", Digits: 2}, "0.25"},
		{Number{Where: []string{"rule", "nope"}, Agg: Max, Col: "x", Digits: 2}, "n/a"},
		{Number{Agg: Min, Col: "x", Digits: 4}, "-0.0031"},
		{Number{Agg: Mean, Col: "g"}, "3"},              // (4+4+2)/3 = 3.33 at 0 digits
		{Number{Agg: SD, Col: "g", Digits: 3}, "1.155"}, // √((0.44+0.44+1.78)/2)
		{Number{Where: []string{"rule", "nope"}, Agg: SD, Col: "g"}, "n/a"},
		{Number{Agg: Str, Col: "rule"}, "token"},
		{Number{Where: []string{"rule", "nope"}, Agg: Str, Col: "rule"}, "n/a"},
	} {
		if got := c.n.Eval(rows); got != c.want {
			t.Errorf("%+v: %q, want %q", c.n, got, c.want)
		}
	}
}

// A table's n/a cells read n/a in Markdown and LaTeX and are empty
// fields in its CSV.
func TestTextNA(t *testing.T) {
	tab := Text{Header: []string{"a", "b"}, Rows: [][]string{{NA, "1"}}}
	if got := tab.CSV(); got != "a,b\n,1\n" {
		t.Errorf("CSV %q, want an empty field for n/a", got)
	}
	if got := tab.Markdown(); !strings.Contains(got, "| n/a | 1 |") {
		t.Errorf("Markdown %q", got)
	}
}

// CoverMean counts the rows whose interval holds the rows' mean; Str keeps
// LaTeX-safe characters only.
func TestNumberCoverMeanAndStr(t *testing.T) {
	rows := []Row{
		{{K: "x", V: 1.0}, {K: "ci_lo", V: 0.5}, {K: "ci_hi", V: 1.5}},
		{{K: "x", V: 2.0}, {K: "ci_lo", V: 1.8}, {K: "ci_hi", V: 2.2}},
		{{K: "x", V: 3.0}, {K: "ci_lo", V: 1.9}, {K: "ci_hi", V: 4.0}},
	}
	if got := (Number{Agg: CoverMean, Col: "x"}).Eval(rows); got != "2" {
		t.Errorf("CoverMean = %s, want 2 (mean 2 lies in [1.8, 2.2] and [1.9, 4])", got)
	}
	if got := plainText(`Intel(R) Xeon(R) CPU E5 @ 2.40GHz_%$\x`); got != "Intel(R) Xeon(R) CPU E5 @ 2.40GHzx" {
		t.Errorf("plainText = %q", got)
	}
}

// TestSignificant: three significant digits without an exponent, the
// digits left of the point kept, a value that rounds up a decade given
// one decimal fewer, and n/a, ±Inf as Fixed writes them.
func TestSignificant(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0.84791, "0.848"}, {6.0449, "6.04"}, {127.4, "127"}, {4488.2, "4488"}, {9.996, "10.0"}, {0.09996, "0.100"}, {-2.345, "-2.35"}, {0, "0"}, {math.Inf(1), "+Inf"}} {
		if got := Significant(c.v, true, 3); got != c.want {
			t.Errorf("Significant(%g, 3) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := Significant(1, false, 3); got != NA {
		t.Errorf("Significant(1, !ok) = %q, want %q", got, NA)
	}
}

// A Sig number is its column's first value times Scale to Digits
// significant digits (a time in ns quoted in µs), n/a without a row.
func TestNumberSig(t *testing.T) {
	rows := []Row{{{K: "rule", V: "token"}, {K: "ns", V: 7553.2}}, {{K: "rule", V: "block"}, {K: "ns", V: 15098.0}}}
	n := Number{Macro: "X", Where: []string{"rule", "block"}, Agg: Sig, Col: "ns", Digits: 3, Scale: 1e-3}
	if got := n.Eval(rows); got != "15.1" {
		t.Errorf("Sig of 15098 ns in µs = %q, want 15.1", got)
	}
	n.Scale = 0 // no change of unit
	if got := n.Eval(rows); got != "15098" {
		t.Errorf("Sig of 15098 unscaled = %q, want 15098", got)
	}
	n.Where = []string{"rule", "none"}
	if got := n.Eval(rows); got != NA {
		t.Errorf("Sig without a row = %q, want %q", got, NA)
	}
}
