package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/lm"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// describe prints a Markov pair's rows exactly as the source holds them:
// one row per state (V+1 states for order 1: the start state last), α =
// Σ min(p, q) and the entropies recomputed from the printed rows.
func TestDescribeMarkovPair(t *testing.T) {
	code, out, stderr := runCLI("describe", "--json", "markov:V=3,order=1,seed=5")
	if code != diag.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d describeJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	src, err := source.New("markov:V=3,order=1,seed=5", 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := sim.PairOf(src)
	pm := pr.P.(*sim.Markov)
	if d.Kind != "pair" || d.V != 3 || len(d.Rows) != 4 || d.Rows[3].State != "^" {
		t.Fatalf("describe: kind %s, V %d, %d rows, last state %q; want pair, 3, 4, ^", d.Kind, d.V, len(d.Rows), d.Rows[len(d.Rows)-1].State)
	}
	for s, r := range d.Rows {
		for x := range r.P {
			if r.P[x] != pm.Rows[s][x] {
				t.Fatalf("state %d: p[%d] = %g, source %g", s, x, r.P[x], pm.Rows[s][x])
			}
		}
		if a := sim.Alpha(r.P, r.Q); math.Abs(a-r.Alpha) > 1e-15 {
			t.Errorf("state %d: alpha %g, Σmin %g", s, r.Alpha, a)
		}
	}
}

// On a pool, one row per context and position, with top tokens sorted by
// probability and no full rows past V = 16.
func TestDescribePool(t *testing.T) {
	code, s, stderr := runCLI("describe", "--gamma", "2", "dirichlet:V=100,contexts=3")
	if code != diag.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.Count(s, "context "); got != 3*2 {
		t.Errorf("%d rows, want 6 (3 contexts × 2 positions):\n%s", got, s)
	}
	if strings.Contains(s, "  p = ") || !strings.Contains(s, "top p: ") {
		t.Errorf("V = 100 printed full rows or no top tokens:\n%s", s)
	}
	// positions are numbered from 1, as 'check' numbers the positions it
	// tests (they were numbered from 0)
	if !strings.Contains(s, "context 0, position 1:") || !strings.Contains(s, "context 2, position 2:") || strings.Contains(s, "position 0") {
		t.Errorf("positions not numbered 1..γ:\n%s", s)
	}
	_, js, _ := runCLI("describe", "--gamma", "2", "dirichlet:V=100,contexts=3", "--json")
	var d struct {
		Rows []struct{ Position *int }
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil || len(d.Rows) != 6 || d.Rows[0].Position == nil || *d.Rows[0].Position != 1 || *d.Rows[1].Position != 2 {
		t.Errorf("describe --json positions: %v, %s", err, js)
	}
	_, js, _ = runCLI("describe", "markov:V=3,order=1", "--json")
	if err := json.Unmarshal([]byte(js), &d); err != nil || len(d.Rows) == 0 || d.Rows[0].Position != nil {
		t.Errorf("a model pair's state has a position (want null): %v, %s", err, js)
	}
}

// list experiments marks exactly the main job's experiments; list sources
// prints every registered kind with its summary and every key with its
// default and documentation, then the corpora; an unknown list is a usage
// error.
func TestListKinds(t *testing.T) {
	_, out, _ := runCLI("list", "sources")
	for _, k := range source.All() {
		if k.Summary == "" || !strings.Contains(out, " "+k.Name+"  ") || !strings.Contains(out, k.Summary) {
			t.Errorf("source %s has no summary in 'list sources':\n%s", k.Name, out)
		}
		for _, key := range append(k.Keys, source.SeedKey) {
			at := "    " + key.Name + "=" + key.Default + " "
			if key.Default == "" {
				at = "    " + key.Name + " "
			}
			if key.Doc == "" || !strings.Contains(out, at) || !strings.Contains(out, key.Doc) {
				t.Errorf("source %s: key %s is not documented in 'list sources':\n%s", k.Name, key.Name, out)
			}
		}
	}
	for _, n := range []string{lm.Code, lm.Prose} {
		if corpusSummaries[n] == "" || !strings.Contains(out, n) {
			t.Errorf("corpus %s has no summary in 'list sources'", n)
		}
	}
	_, js, _ := runCLI("list", "sources", "--json")
	var items []listItem
	if err := json.Unmarshal([]byte(js), &items); err != nil || len(items) != len(source.Kinds())+2 || len(items[0].Keys) == 0 {
		t.Errorf("list sources --json: %v, %d items for %d kinds and 2 corpora:\n%s", err, len(items), len(source.Kinds()), js)
	}
	_, out, _ = runCLI("list", "experiments")
	if !strings.Contains(out, "* smc-steering") || !strings.Contains(out, "  verify") {
		t.Errorf("list experiments:\n%s", out)
	}
	if code, _, _ := runCLI("list", "nope"); code != diag.ExitUsage {
		t.Errorf("list nope: exit %d, want usage", code)
	}
}
