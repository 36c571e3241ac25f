package table

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strings"

	"github.com/specsim/specsim/internal/escape"
)

// Text is a formatted result table: its cells are already text. It
// renders as Markdown, LaTeX (booktabs) or CSV.
type Text struct {
	// Name is the file stem, Caption the one-line description.
	Name, Caption string
	Header        []string
	// Right marks right-aligned (numeric) columns.
	Right []bool
	Rows  [][]string
}

// align returns, for each column in order, right where it is
// right-aligned and left otherwise.
func (t Text) align(right, left string) string {
	var b strings.Builder
	for i := range t.Header {
		if i < len(t.Right) && t.Right[i] {
			b.WriteString(right)
		} else {
			b.WriteString(left)
		}
	}
	return b.String()
}

// Markdown renders t as a GitHub table (numeric columns right-aligned).
func (t Text) Markdown() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(escapeAll(t.Header, mdEscape), " | ") + " |\n|")
	b.WriteString(t.align("---:|", "---|") + "\n")
	for _, r := range t.Rows {
		b.WriteString("| " + strings.Join(escapeAll(r, mdEscape), " | ") + " |\n")
	}
	return b.String()
}

// LaTeX renders t as a booktabs tabular (no float, so the paper chooses
// placement and caption).
func (t Text) LaTeX() string {
	var b strings.Builder
	b.WriteString("\\begin{tabular}{" + t.align("r", "l") + "}\n\\toprule\n")
	b.WriteString(strings.Join(escapeAll(t.Header, texEscape), " & ") + " \\\\\n\\midrule\n")
	for _, r := range t.Rows {
		b.WriteString(strings.Join(escapeAll(r, texEscape), " & ") + " \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	return b.String()
}

// CSV renders t as RFC 4180 CSV with a header line; an NA cell is an
// empty field, and every cell goes through CSVText (formula injection).
func (t Text) CSV() string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(CSVTexts(t.Header))
	for _, r := range t.Rows {
		rec := make([]string, len(r))
		for i, c := range r {
			if c != NA {
				rec[i] = CSVText(c)
			}
		}
		_ = w.Write(rec)
	}
	w.Flush() // a bytes.Buffer cannot fail
	return b.String()
}

// RightCols returns n alignment flags with the columns right set: the
// Right field of a Text whose columns right are numeric.
func RightCols(n int, right ...int) []bool {
	out := make([]bool, n)
	for _, i := range right {
		out[i] = true
	}
	return out
}

func escapeAll(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// mdEscape and texEscape are the one escaping of each medium
// (internal/escape): a cell is data, never markup.
var (
	mdEscape  = escape.Markdown
	texEscape = escape.TeX
)

// NA is how text says "no value": a NaN, an absent column, a measure
// that does not apply (JSON writes null and CSV an empty field).
const NA = "n/a"

// Fixed formats v with d decimals: NA when !ok or v is NaN, "+Inf" and
// "-Inf" for infinities, and no sign on a value that rounds to zero.
func Fixed(v float64, ok bool, d int) string {
	if !ok || math.IsNaN(v) {
		return NA
	}
	if math.IsInf(v, 0) {
		if v > 0 {
			return "+Inf"
		}
		return "-Inf"
	}
	s := fmt.Sprintf("%.*f", d, v)
	if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
		s = s[1:] // a value that rounds to zero prints without a sign
	}
	return s
}

// FixedCol is column k of r formatted by Fixed with d decimals (NA when
// absent or not numeric).
func FixedCol(r Row, k string, d int) string {
	v, ok := r.Float(k)
	return Fixed(v, ok, d)
}

// Significant formats v to d significant digits without an exponent
// (0.848, 6.04, 127, 4488 at d = 3: digits left of the point are kept),
// as Fixed does NaN, ±Inf and !ok.
func Significant(v float64, ok bool, d int) string {
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return Fixed(v, ok, 0)
	}
	e := int(math.Floor(math.Log10(math.Abs(v))))
	if r := math.Abs(v) / math.Pow(10, float64(e)); math.Round(r*math.Pow(10, float64(d-1))) >= math.Pow(10, float64(d)) {
		e++ // 9.996 rounds to 10.0, not 10.00
	}
	return Fixed(v, true, max(0, d-1-e))
}
