package table

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

var rows = []Row{
	{{K: "rule", V: "token"}, {K: "k", V: int64(1)}, {K: "a", V: 0.5}},
	{{K: "rule", V: "block"}, {K: "k", V: int64(2)}, {K: "a", V: math.NaN()}},
	{{K: "rule", V: "token"}, {K: "k", V: int64(2)}, {K: "a", V: math.Inf(1)}},
}

// The queries select by the text of a column; Num reads ints as floats and
// absent columns as NaN.
func TestQueries(t *testing.T) {
	if r := Find(rows, "rule", "token", "k", "2"); r == nil || !math.IsInf(Num(r, "a"), 1) {
		t.Errorf("Find = %v", r)
	}
	if Find(rows, "rule", "greedy") != nil {
		t.Error("Find of an absent value")
	}
	if got := Where(rows, And(Eq("rule", "token"), func(r Row) bool { return Num(r, "k") == 1 })); len(got) != 1 {
		t.Errorf("Where = %v", got)
	}
	if got := Distinct(rows, "k"); !slices.Equal(got, []float64{1, 2}) {
		t.Errorf("Distinct = %v", got)
	}
	if got := DistinctS(rows, "rule"); !slices.Equal(got, []string{"token", "block"}) {
		t.Errorf("DistinctS = %v", got)
	}
	if !math.IsNaN(Num(rows[0], "absent")) || !math.IsNaN(Num(rows[0], "rule")) {
		t.Error("Num of an absent or text column is not NaN")
	}
	if (Cell{Key: rows[0][:2]}).ID() != "rule=token,k=1" {
		t.Errorf("ID = %q", Cell{Key: rows[0][:2]}.ID())
	}
}

// CSV writes NaN (n/a) as an empty field like a missing column, +Inf and
// -Inf as such, floats in the shortest round-trip form; JSON writes every
// non-finite float null, so numeric fields stay numeric or null.
func TestEncode(t *testing.T) {
	var b bytes.Buffer
	rs := append(rows, Row{{K: "rule", V: "x"}, {K: "a", V: math.Inf(-1)}, {K: "ok", V: true}})
	if err := WriteCSV(&b, []string{"rule", "k", "a", "ok"}, rs); err != nil {
		t.Fatal(err)
	}
	want := "rule,k,a,ok\ntoken,1,0.5,\nblock,2,,\ntoken,2,+Inf,\nx,,-Inf,true\n"
	if b.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
	j, err := rows[1].MarshalJSON()
	if err != nil || string(j) != `{"rule":"block","k":2,"a":null}` {
		t.Errorf("row JSON %s, %v", j, err)
	}
	b.Reset()
	if err := WriteJSON(&b, struct {
		X float64 `json:"x"`
		Y []float64
	}{math.Inf(1), []float64{0.1, math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"x\": null,\n  \"Y\": [\n    0.1,\n    null\n  ]\n}\n"; b.String() != want {
		t.Errorf("WriteJSON:\n%s\nwant:\n%s", b.String(), want)
	}
}
