package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// 'simulate bench' times --count runs and reports each with its wall and
// CPU time, then their median (it used to print one wall-clock figure);
// --format gobench writes the lines of 'go test -bench' that benchstat
// reads: benchfmt, benchstat's parser, reads one result per run with
// every unit, and the configuration lines.
func TestBenchRuns(t *testing.T) {
	args := []string{"bench", "--algo", "token", "--vocab", "500", "--gamma", "2", "--seconds", "0.05", "--count", "3", "--pool-mib", "1", "--seed", "1"}
	code, out, errs := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"3 runs", "  run 1: ", "  run 3: ", "s CPU: ", "CPU ns/step", "median over 3 runs: "} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = runCLI(append(args, "--format", "gobench")...)
	if code != 0 {
		t.Fatalf("gobench: exit %d: %s", code, errs)
	}
	r := benchfmt.NewReader(strings.NewReader(out), "bench.txt")
	var results []*benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("benchfmt read %d results, want 3 (one per run):\n%s", len(results), out)
	}
	res := results[0]
	if name := string(res.Name); !strings.HasPrefix(name, "Verify/algo=token/V=500/gamma=2/workers=1") {
		t.Errorf("benchmark name %q", name)
	}
	if res.Iters <= 0 || string(res.GetConfig("goos")) == "" || string(res.GetConfig("seed")) != "1" {
		t.Errorf("iterations %d, goos %q, seed %q", res.Iters, res.GetConfig("goos"), res.GetConfig("seed"))
	}
	units := map[string]float64{}
	for _, v := range res.Values {
		if v.OrigUnit != "" { // benchfmt tidies ns/op into sec/op
			units[v.OrigUnit] = v.OrigValue
		} else {
			units[v.Unit] = v.Value
		}
	}
	for _, u := range []string{"ns/op", "cpu-ns/op", "emitted/op", "allocs/op"} {
		if _, ok := units[u]; !ok {
			t.Errorf("no %s value in %v", u, res.Values)
		}
	}
	if v := units["emitted/op"]; !(v > 1 && v <= 3) {
		t.Errorf("emitted/op = %g, want in (1, 3] at γ = 2", v)
	}
	// --json keeps every run and the summary
	code, out, errs = runCLI(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	var j benchJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.Count != 3 || len(j.Runs) != 3 || j.Steps != j.Runs[0].Steps+j.Runs[1].Steps+j.Runs[2].Steps || !(j.StepsPerSecond > 0) {
		t.Errorf("json: count %d, %d runs, %d steps, %g steps/s", j.Count, len(j.Runs), j.Steps, j.StepsPerSecond)
	}
	for _, c := range []struct{ args []string }{{[]string{"--count", "0"}}, {[]string{"--format", "xml"}}, {[]string{"--json", "--format", "gobench"}}} {
		if code, _, _ := runCLI(append(args, c.args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
	}
}

// The median of the runs' rates, leaving out rates not measured (NaN).
func TestMedian(t *testing.T) {
	f := func(x float64) float64 { return x }
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{math.NaN(), 5}, 5}} {
		if got := median(c.xs, f); got != c.want {
			t.Errorf("median(%v) = %g, want %g", c.xs, got, c.want)
		}
	}
	if !math.IsNaN(median([]float64{math.NaN()}, f)) {
		t.Error("median of nothing measured is not NaN")
	}
}
