package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/gitrev"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/table"
)

func TestExportRoundTrip(t *testing.T) {
	rows := []table.Row{
		{{K: "experiment", V: "x"}, {K: "a", V: 0.1}, {K: "n", V: int64(-3)}, {K: "s", V: "q,\"t\""}, {K: "b", V: true}},
		{{K: "experiment", V: "x"}, {K: "a", V: math.NaN()}, {K: "n", V: int64(7)}},
		{{K: "experiment", V: "x"}, {K: "a", V: math.Inf(-1)}, {K: "b", V: false}},
		{{K: "experiment", V: "x"}, {K: "a", V: 1.0 / 3}},
	}
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := results.WriteFile(path, rows, results.Meta{results.KeyExperiment: "x"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(&out, os.Stderr, []string{"report", "export", path, "--format", "csv"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"experiment", "a", "n", "s", "b"}, {"x", "0.1", "-3", "q,\"t\"", "true"}, {"x", "", "7", "", ""},
		{"x", "-Inf", "", "", "false"}, {"x", "0.3333333333333333", "", "", ""}}
	if len(recs) != len(want) {
		t.Fatalf("csv %v", recs)
	}
	for i := range want {
		if strings.Join(recs[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("csv row %d: %q, want %q", i, recs[i], want[i])
		}
	}
	// the CSV floats parse back bit for bit
	if v, _ := strconv.ParseFloat(recs[4][1], 64); v != 1.0/3 {
		t.Errorf("1/3 came back as %v", v)
	}
	out.Reset()
	if code := run(&out, os.Stderr, []string{"report", "export", "--format", "json", path}); code != 0 {
		t.Fatalf("json exit %d", code)
	}
	var j struct {
		Columns    []results.Column `json:"columns"`
		Meta       map[string]string
		Rows       []map[string]any `json:"rows"`
		Infinities []struct {
			Row           int
			Column, Value string
		} `json:"infinities"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	// numeric columns hold numbers or null (NaN and -Inf), and the
	// infinities say which null is -Inf
	if a, ok := j.Rows[1]["a"]; len(j.Rows) != 4 || j.Rows[0]["s"] != "q,\"t\"" || !ok || a != nil || j.Rows[2]["a"] != nil ||
		j.Rows[3]["a"] != 1.0/3 || j.Rows[0]["n"] != -3.0 || j.Meta[results.KeyExperiment] != "x" || len(j.Columns) != 5 {
		t.Errorf("json %s", out.String())
	}
	if len(j.Infinities) != 1 || j.Infinities[0].Row != 2 || j.Infinities[0].Column != "a" || j.Infinities[0].Value != "-Inf" {
		t.Errorf("infinities %+v, want row 2, column a, -Inf", j.Infinities)
	}
	if _, ok := j.Rows[3]["n"]; ok {
		t.Error("a null came back as a value")
	}
	if code := run(&out, os.Stderr, []string{"report", "export", path, "--format", "xml"}); code != diag.ExitUsage {
		t.Errorf("--format xml: exit %d, want %d", code, diag.ExitUsage)
	}
	if code := run(&out, os.Stderr, []string{"report", "export", filepath.Join(t.TempDir(), "none.parquet")}); code != diag.ExitIO {
		t.Errorf("missing file: exit %d, want %d", code, diag.ExitIO)
	}
}

func TestReproduceUsage(t *testing.T) {
	var out, errb bytes.Buffer
	for _, args := range [][]string{
		{"report", "reproduce", "--scale", "0"},
		{"report", "reproduce", "--only", "nope"},
		{"report", "reproduce", "extra"},
		{"report", "build"},
		{"report", "paper"},
	} {
		if code := run(&out, &errb, args); code != diag.ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, diag.ExitUsage, errb.String())
		}
	}
	if code := run(&out, &errb, []string{"report", "build", t.TempDir()}); code != diag.ExitIO {
		t.Errorf("build of an empty dir: exit %d, want %d", code, diag.ExitIO)
	}
}

// TestVersion: 'report --version' prints the build information's version
// line and exits 0.
func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	want := "report version " + gitrev.Current().String() + "\n"
	if code := run(&out, &errb, []string{"report", "--version"}); code != 0 || out.String() != want || errb.Len() != 0 {
		t.Fatalf("report --version: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, out.String(), errb.String(), want)
	}
}
