package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/diag"
)

// TestLogCommands: log-synthetic writes a log that validate-log accepts
// and replay reports with the documented JSON fields; every corrupted or
// invalid file ends in a clear error and its exit code.
func TestLogCommands(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	if code, _, errs := runCLI("log-synthetic", "--source", "markov:V=4,order=1,seed=7", "--steps", "300", "--gamma", "2", "--out", good, "--seed", "5", "--json"); code != 0 {
		t.Fatalf("log-synthetic: %d %s", code, errs)
	}
	if code, out, errs := runCLI("validate-log", good); code != 0 || !strings.Contains(out, "valid, 300 rows") {
		t.Fatalf("validate-log: %d %s %s", code, out, errs)
	}
	code, out, errs := runCLI("replay", "--log", good, "--algo", "token,greedy,exact-match,token-nobonus,mutant-resample-p", "--seed", "1", "--json")
	if code != 0 {
		t.Fatalf("replay: %d %s", code, errs)
	}
	var rep struct {
		Steps int64
		Rules []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Steps != 300 || len(rep.Rules) != 5 {
		t.Fatalf("replay JSON: %s", out)
	}
	for _, r := range rep.Rules {
		wantKeys(t, fmt.Sprintf("replay rule %v", r["algorithm"]), r, "algorithm", "steps", "mean_accepted_exact", "mean_emitted_exact", "mean_alpha", "mean_emitted_sampled", "ci95", "lossless")
		if ci := r["ci95"].([]any); len(ci) != 2 || ci[0].(float64) > r["mean_emitted_sampled"].(float64) {
			t.Errorf("ci95 %v", ci)
		}
	}
	// token-nobonus emits exactly one token less than token after a full
	// acceptance: E[emitted] - E[accepted] = 1 for token.
	tok := rep.Rules[0]
	if d := tok["mean_emitted_exact"].(float64) - tok["mean_accepted_exact"].(float64); math.Abs(d-1) > 1e-6 { // float32 rows sum to 1 within ~1e-7
		t.Errorf("token: emitted - accepted = %g, want 1", d)
	}

	raw, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	var nanBuf bytes.Buffer
	w := parquet.NewGenericWriter[data.LogRow](&nanBuf)
	w.Write([]data.LogRow{{SchemaVersion: 1, Gamma: 1, VocabSize: 2, DraftTokens: []int32{0}, Temperature: 1, TopP: 1,
		RowKind: data.KindProbs, Layout: data.LayoutDense, Q: []float32{0.5, 0.5}, P: []float32{float32(math.NaN()), 1, 0.5, 0.5}, Emitted: []int32{0}}})
	w.Close()
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing file", []string{"validate-log", filepath.Join(dir, "nope.parquet")}, diag.ExitIO, "no such file"},
		{"truncated", []string{"validate-log", write("trunc.parquet", raw[:len(raw)/2])}, diag.ExitIO, "unreadable"},
		{"text", []string{"validate-log", write("text.parquet", []byte("hello\n"))}, diag.ExitIO, "unreadable"},
		{"NaN", []string{"validate-log", write("nan.parquet", nanBuf.Bytes())}, diag.ExitUsage, "p_1: entry 0 is NaN"},
		{"replay truncated", []string{"replay", "--log", filepath.Join(dir, "trunc.parquet")}, diag.ExitIO, "unreadable"},
		{"replay NaN", []string{"replay", "--log", filepath.Join(dir, "nan.parquet")}, diag.ExitUsage, "p: row p_1"},
		{"replay unknown rule", []string{"replay", "--log", good, "--algo", "nosuch"}, diag.ExitUsage, "unknown algorithm"},
		{"replay bug on probs", []string{"replay", "--log", good, "--bug", "p-raw"}, diag.ExitUsage, "needs rows of raw logits"},
		{"replay bad bug", []string{"replay", "--log", good, "--bug", "x"}, diag.ExitUsage, "unknown transform bug"},
		{"log-synthetic bad sampling", []string{"log-synthetic", "--source", "markov:V=4", "--out", filepath.Join(dir, "x.parquet"), "--top-p", "0"}, diag.ExitUsage, "top_p"},
		{"log-synthetic sparse logits", []string{"log-synthetic", "--source", "markov:V=4", "--out", filepath.Join(dir, "y.parquet"), "--sparse", "2", "--logits"}, diag.ExitUsage, "sparse"},
	}
	for _, c := range cases {
		code, out, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(out+errs, c.msg) {
			t.Errorf("%s: exit %d (want %d), output %q %q (want %q)", c.name, code, c.code, out, errs, c.msg)
		}
	}
	// --fail-on-violation exits 3 only for non-mutant rules.
	logits := filepath.Join(dir, "logits.parquet")
	if code, _, errs := runCLI("log-synthetic", "--source", "markov:V=8,order=1,quality=0.3,seed=5", "--steps", "4000", "--gamma", "2",
		"--out", logits, "--seed", "8", "--logits", "--temperature", "0.6", "--top-k", "3", "--steps-per-prompt", "50"); code != 0 {
		t.Fatalf("log-synthetic logits: %s", errs)
	}
	if code, out, _ := runCLI("replay", "--log", logits, "--seed", "4", "--bug", "p-raw", "--fail-on-violation"); code != diag.ExitViolated {
		t.Errorf("p-raw with --fail-on-violation: exit %d, want 3\n%s", code, out)
	}
	if code, out, _ := runCLI("replay", "--log", logits, "--seed", "4", "--fail-on-violation"); code != 0 {
		t.Errorf("correct replay with --fail-on-violation: exit %d\n%s", code, out)
	}
}
