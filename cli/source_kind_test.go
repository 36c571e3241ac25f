package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// The test-coin kind exists only in this test binary: one Register call,
// in this file, and no other edit. TestNewKindEverywhere shows that this is
// enough for every command that takes a source spec.
func init() {
	source.Register(source.Kind{
		Name:    "test-coin",
		Summary: "test only: a context-free pair over two tokens, p = (p, 1-p) and q = (q, 1-q) at every position",
		Keys: []source.Key{
			{Name: "p", Default: "0.3", Doc: "target probability of token 0, in (0, 1)"},
			{Name: "q", Default: "0.6", Doc: "draft probability of token 0, in (0, 1)"},
		},
		Quality: "q",
		Parse: func(a *source.Args) (source.Config, error) {
			return testCoin{name: a.Spec, gamma: a.Gamma, p: a.Float("p"), q: a.Float("q")}, nil
		},
	})
}

// testCoin is the config of the test-coin kind.
type testCoin struct {
	name  string
	gamma int
	p, q  float64
}

func (c testCoin) Check() error {
	if !(c.p > 0 && c.p < 1 && c.q > 0 && c.q < 1) {
		return fmt.Errorf("source test-coin: p = %g, q = %g; use values in (0, 1)", c.p, c.q)
	}
	return nil
}

func (c testCoin) Build(*rand.Rand) (sim.BlockSource, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	pr := sim.Pair{Name: c.name, P: sim.Fixed{c.p, 1 - c.p}, Q: sim.Fixed{c.q, 1 - c.q}}
	ch, err := sim.NewChain(pr, c.gamma)
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// TestNewKindEverywhere: a kind registered from a _test.go file is at once
// usable by every consumer of source specs: list sources (with its keys),
// describe, exact (the law of token verification on p = (0.3, 0.7),
// q = (0.6, 0.4): α = Σmin(p, q) = 0.7, E[accepted] = α + α² = 1.19 at
// γ = 2, lossless; always-accept accepts 2 and is not), check (token preserved with
// α̂ within 0.02 of 0.7, about 7 standard deviations at these trials;
// always-accept violated), a verify sweep (its quality axis sets the
// kind's quality key q), and log-synthetic followed by replay (every
// logged step has α = 0.7, up to float32 rounding).
func TestNewKindEverywhere(t *testing.T) {
	t.Parallel()
	const spec = "test-coin:q=0.6,p=0.3"
	const canon = "test-coin:p=0.3,q=0.6"
	ok := func(args ...string) string {
		t.Helper()
		code, out, errs := runCLI(args...)
		if code != diag.ExitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	if out := ok("list", "sources"); !strings.Contains(out, "test-coin") || !strings.Contains(out, "draft probability of token 0") {
		t.Errorf("list sources lacks test-coin or its keys:\n%s", out)
	}

	d := decodeJSON(t, "describe", ok("describe", "--json", spec), "source", "kind", "V")
	if d["source"] != canon || d["kind"] != "pair" || d["V"] != 2.0 {
		t.Errorf("describe: source %v, kind %v, V %v", d["source"], d["kind"], d["V"])
	}

	var ex struct {
		Source           string  `json:"source"`
		ExpectedAccepted float64 `json:"expected_accepted"`
		Lossless         bool    `json:"lossless"`
	}
	if err := json.Unmarshal([]byte(ok("exact", "--algo", "token", "--source", spec, "--gamma", "2", "--json")), &ex); err != nil {
		t.Fatal(err)
	}
	if ex.Source != canon || math.Abs(ex.ExpectedAccepted-1.19) > 1e-12 || !ex.Lossless {
		t.Errorf("exact token: %+v, want %s, E[accepted] = 1.19, lossless", ex, canon)
	}
	if err := json.Unmarshal([]byte(ok("exact", "--algo", "mutant-always-accept", "--source", spec, "--gamma", "2", "--json")), &ex); err != nil {
		t.Fatal(err)
	}
	if math.Abs(ex.ExpectedAccepted-2) > 1e-12 || ex.Lossless {
		t.Errorf("exact mutant-always-accept: %+v, want E[accepted] = 2, not lossless", ex)
	}

	var ck struct {
		Source   string  `json:"source"`
		Verdict  string  `json:"verdict"`
		AlphaHat float64 `json:"alpha_hat"`
	}
	if err := json.Unmarshal([]byte(ok("check", "--algo", "token", "--source", spec, "--gamma", "2", "--trials", "20000", "--seed", "3", "--json")), &ck); err != nil {
		t.Fatal(err)
	}
	if ck.Source != canon || ck.Verdict != "not_detected" || math.Abs(ck.AlphaHat-0.7) > 0.02 {
		t.Errorf("check token: %+v, want %s preserved with alpha_hat near 0.7", ck, canon)
	}
	if code, _, _ := runCLI("check", "--algo", "mutant-always-accept", "--source", spec, "--gamma", "2", "--trials", "20000", "--seed", "3"); code != diag.ExitViolated {
		t.Errorf("check mutant-always-accept: exit %d, want violated", code)
	}

	dir := t.TempDir()
	toml := filepath.Join(dir, "coin.toml")
	text := "experiment = \"verify\"\n[axes]\nsource = [\"test-coin:p=0.3\"]\nalgo = [\"token\"]\ngamma = [2]\ntrials = [2000]\nquality = [0.6]\n"
	if err := os.WriteFile(toml, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(ok("run", toml, "--seed", "1", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0]["exact_accepted"] == nil || math.Abs(rows[0]["exact_accepted"].(float64)-1.19) > 1e-12 {
		t.Errorf("run: rows %v, want one row with exact_accepted 1.19", rows)
	}

	log := filepath.Join(dir, "coin.parquet")
	ok("log-synthetic", "--source", spec, "--steps", "300", "--gamma", "2", "--out", log)
	var rp struct {
		MeanAlpha float64 `json:"mean_alpha"`
		Rules     []struct {
			Algorithm string `json:"algorithm"`
			Lossless  struct {
				Verdict string `json:"verdict"`
			} `json:"lossless"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(ok("replay", log, "--json")), &rp); err != nil {
		t.Fatal(err)
	}
	if math.Abs(rp.MeanAlpha-0.7) > 1e-6 || len(rp.Rules) != 1 || rp.Rules[0].Lossless.Verdict != "consistent" {
		t.Errorf("replay: mean alpha %v, rules %+v; want 0.7 and token consistent", rp.MeanAlpha, rp.Rules)
	}
}
