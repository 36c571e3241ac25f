package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// runCLI runs simulate in-process and returns its exit code and outputs.
func runCLI(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := run(&out, &errw, append([]string{"simulate"}, args...))
	return code, out.String(), errw.String()
}

// decodeJSON decodes a command's stdout as one JSON object (the test
// stops when it is not one) and checks that it has the fields keys.
func decodeJSON(t *testing.T, what, out string, keys ...string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	wantKeys(t, what, m, keys...)
	return m
}

// wantKeys reports each of keys that the JSON object m of what lacks.
func wantKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s JSON lacks %q", what, k)
		}
	}
}

func TestExactJSON(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI("exact", "--algo", "token", "--p", "1/3,2/3", "--q", "2/3,1/3", "--gamma", "2", "--json", "--seed", "1")
	if code != diag.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Algorithm        string  `json:"algorithm"`
		Gamma            int     `json:"gamma"`
		ExpectedAccepted float64 `json:"expected_accepted"`
		ExpectedEmitted  float64 `json:"expected_emitted"`
		MaxAbsError      float64 `json:"max_abs_error"`
		Lossless         bool    `json:"lossless"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Algorithm != "token" || r.Gamma != 2 || math.Abs(r.ExpectedAccepted-10.0/9) > 1e-15 ||
		math.Abs(r.ExpectedEmitted-19.0/9) > 1e-15 || r.MaxAbsError > 1e-12 || !r.Lossless {
		t.Errorf("exact JSON = %+v; want token, gamma 2, 10/9 accepted, 19/9 emitted, lossless", r)
	}
	// Flags after the positional words, and a lossy rule with an infinite
	// per-position KL, still give valid JSON.
	code, out, errs = runCLI("exact", "--algo", "typical", "--p", "0.05,0.15,0.8", "--q", "0.3,0.3,0.4", "--gamma", "1", "--json")
	if code != diag.ExitOK || !json.Valid([]byte(out)) {
		t.Errorf("typical exact: exit %d, valid JSON %v: %s", code, json.Valid([]byte(out)), errs)
	}
}

// TestBadInput: every malformed input gets exit 2 and one clear line on
// stderr naming the field, never a panic.
func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exact", "--p", "1/3,x", "--q", "1/2,1/2"}, "--p entry 1"},
		{[]string{"exact", "--p", "0.5,0.6", "--q", "1/2,1/2"}, "sums to"},
		{[]string{"exact", "--p", "NaN,1", "--q", "1/2,1/2"}, "NaN"},
		{[]string{"exact", "--p", "-0.5,1.5", "--q", "1/2,1/2"}, "negative"},
		{[]string{"exact", "--p", "1/2,1/2", "--q", "1/3,1/3,1/3"}, "mismatch"},
		{[]string{"exact", "--p", "1/0,1", "--q", "1/2,1/2"}, "division by zero"},
		{[]string{"exact", "--source", "markov:V=99"}, "V = 99"},
		{[]string{"exact", "--source", "dirichlet:V=10"}, "exact engine needs"},
		{[]string{"exact", "--algo", "nope", "--p", "1", "--q", "1"}, "unknown algorithm"},
		{[]string{"exact", "--algo", "mentored", "--param", "D=-1", "--p", "1/2,1/2", "--q", "1/2,1/2"}, "param D"},
		{[]string{"exact", "--algo", "lenience", "--param", "l=1.5", "--p", "1/2,1/2", "--q", "1/2,1/2"}, "param l"},
		{[]string{"exact", "--algo", "token", "--param", "D", "--p", "1/2,1/2", "--q", "1/2,1/2"}, "key=value"},
		{[]string{"exact", "--gamma", "0", "--p", "1/2,1/2", "--q", "1/2,1/2"}, "gamma"},
		{[]string{"exact", "--p", "1/2,1/2", "--q", "1/2,1/2", "--source", "markov:V=2"}, "not both"},
		{[]string{"exact", "--algo", "mutant-zero-coin", "--p", "1/2,1/2", "--q", "1/2,1/2"}, "no exact law"},
		{[]string{"check", "--trials", "0", "--source", "markov:V=3"}, "trials"},
		{[]string{"check", "--source", "zipf:s=-1"}, "exponents"},
		{[]string{"bench", "--seconds", "-1"}, "--seconds"},
		{[]string{"bench", "--algo", "token", "--k", "3"}, "--k needs a tree rule"},
		{[]string{"bench", "--algo", "specinfer", "--workers", "2"}, "--workers is for chain rules"},
		{[]string{"bench", "--algo", "specinfer", "--k", "0", "--vocab", "64"}, "k = 0"},
		{[]string{"run", "nope"}, "unknown experiment"},
		{[]string{"exact", "--nosuchflag"}, "flag provided but not defined"},
		{[]string{"scenario", "fms-example", "--algo", "specinfer"}, "needs draft probabilities"},
		{[]string{"check", "--algo", "specinfer", "--draft", "iid", "--branch", "2,1", "--source", "markov:V=3"}, "--branch does not apply to drafter iid"},
		{[]string{"check", "--algo", "specinfer", "--branch", "2,1", "--source", "markov:V=3"}, "--branch does not apply to drafter iid"},
		{[]string{"exact", "--algo", "specinfer", "--draft", "iid", "--branch", "2,1", "--p", "1/2,1/2", "--q", "1/2,1/2"}, "--branch does not apply to drafter iid"},
	} {
		code, _, errs := runCLI(c.args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		last := lines[len(lines)-1]
		if code != diag.ExitUsage || !strings.Contains(last, c.want) || !strings.HasPrefix(last, "simulate: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and a line mentioning %q", c.args, code, errs, diag.ExitUsage, c.want)
		}
	}
}

func TestListJSON(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI("list", "--json")
	var l []struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		HasLaw bool   `json:"has_law"`
	}
	if code != diag.ExitOK || json.Unmarshal([]byte(out), &l) != nil {
		t.Fatalf("list: exit %d, %q", code, out)
	}
	seen := map[string]bool{}
	for _, e := range l {
		seen[e.Name] = true
		if e.Name == "mutant-zero-coin" && (e.HasLaw || e.Kind != "mutant") {
			t.Errorf("mutant-zero-coin listed as %+v", e)
		}
	}
	for _, n := range []string{"token", "token-nobonus", "greedy", "exact-match", "block", "mentored", "mutant-resample-p", "mutant-bonus-row"} {
		if !seen[n] {
			t.Errorf("list lacks %s", n)
		}
	}
}

// TestCheckCLI: the check's JSON carries the documented fields, and a
// mutant exits with diag.ExitViolated.
func TestCheckCLI(t *testing.T) {
	t.Parallel()
	args := []string{"check", "--source", "dirichlet:V=256,contexts=4", "--gamma", "3", "--trials", "20000", "--seed", "1", "--json"}
	code, out, errs := runCLI(append(args, "--algo", "token")...)
	if code != diag.ExitOK {
		t.Fatalf("check token: exit %d: %s", code, errs)
	}
	r := decodeJSON(t, "check", out, "verdict", "p_value", "min_detectable_quantity", "min_detectable_tv", "mode", "trials", "seed", "alpha_hat", "mean_emitted", "edge_verdict")
	if r["verdict"] != "not_detected" || r["seed"].(float64) != 1 || r["trials"].(float64) != 20000 {
		t.Errorf("check token: verdict %v seed %v trials %v", r["verdict"], r["seed"], r["trials"])
	}
	if code, _, _ := runCLI(append(args, "--algo", "mutant-resample-p")...); code != diag.ExitViolated {
		t.Errorf("check of a mutant exited %d, want %d", code, diag.ExitViolated)
	}
	// The edge cases are part of the verdict and the exit code.
	if code, out, _ := runCLI(append(args, "--algo", "mutant-zero-coin")...); code != diag.ExitViolated || !strings.Contains(out, `"verdict": "violated"`) {
		t.Errorf("check mutant-zero-coin exited %d, want %d with verdict violated", code, diag.ExitViolated)
	}
	// Tree rules are checked too; too few trials are inconclusive.
	tree := []string{"check", "--algo", "specinfer", "--k", "2", "--source", "markov:V=4,order=2", "--gamma", "2", "--seed", "1", "--json"}
	if code, _, errs := runCLI(append(tree, "--trials", "5000")...); code != diag.ExitOK {
		t.Errorf("check specinfer exited %d: %s", code, errs)
	}
	if code, _, _ := runCLI(append(tree, "--trials", "3")...); code != diag.ExitInconclusive {
		t.Errorf("check with 3 trials exited %d, want %d (inconclusive)", code, diag.ExitInconclusive)
	}
}

// TestBenchCLI is not parallel: allocs_per_step counts the whole
// process's allocations.
func TestBenchCLI(t *testing.T) {
	code, out, errs := runCLI("bench", "--algo", "token", "--vocab", "1000", "--gamma", "2", "--seconds", "0.2", "--pool-mib", "1", "--seed", "1", "--json")
	var r map[string]any
	if code != diag.ExitOK || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("bench: exit %d: %s", code, errs)
	}
	if r["steps_per_second"].(float64) <= 0 || r["allocs_per_step"].(float64) > 0.01 || r["mean_emitted"].(float64) < 1 {
		t.Errorf("bench JSON = %v", r)
	}
	// A tree rule: k i.i.d. chains of depth --gamma merged where they
	// share a prefix, so a tree has 1 + depth to 1 + k·depth nodes, and
	// the accepted depth is in [0, depth].
	code, out, errs = runCLI("bench", "--algo", "specinfer", "--k", "2", "--vocab", "64", "--gamma", "2", "--seconds", "0.1", "--seed", "1", "--json")
	if code != diag.ExitOK {
		t.Fatalf("bench specinfer: exit %d: %s", code, errs)
	}
	tr := decodeJSON(t, "bench specinfer", out, "V", "k", "depth", "seed", "rule", "draft", "trees", "seconds", "trees_per_second",
		"cpu_seconds", "trees_per_cpu_second", "mean_accepted", "mean_nodes")
	if tr["k"] != 2.0 || tr["depth"] != 2.0 || tr["V"] != 64.0 || tr["rule"] != "specinfer" || tr["draft"] != "iid" || !(tr["mean_nodes"].(float64) >= 3 && tr["mean_nodes"].(float64) <= 5) ||
		!(tr["trees"].(float64) > 0) || !(tr["mean_accepted"].(float64) >= 0 && tr["mean_accepted"].(float64) <= 2) {
		t.Errorf("bench specinfer JSON = %v", tr)
	}
}

// FuzzParsers: no input to the distribution, parameter and source parsers
// panics; accepted distributions are valid.
func FuzzParsers(f *testing.F) {
	for _, s := range []string{"1/3,2/3", "0.5,0.5", "1/0", ",,", "NaN", "-1,2", "1e309,0", "markov:V=4,order=1", "dirichlet:V=3,beta=0.5", "D=0.1", "x=y=z", "/", "1/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, err := parseDist("--p", s, nil); err == nil {
			sum := 0.0
			for _, v := range p {
				if v < 0 || math.IsNaN(v) {
					t.Fatalf("parseDist(%q) accepted %v", s, p)
				}
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("parseDist(%q) sums to %v", s, sum)
			}
		}
		_, _ = parseParams([]string{s})
		_, _ = parseParams(strings.Split(s, " "))
		if len(s) < 64 { // sources allocate V-sized rows
			_, _, _ = runCLI("exact", "--source", s, "--gamma", "1")
		}
	})
}
