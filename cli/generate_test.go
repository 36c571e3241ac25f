package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// TestGenerateCLI runs small generations on a small prose pair without the
// disk cache: JSON fields, exit 3 for a mutant, exit 2 for bad input, and
// the same result for any worker count.
func TestGenerateCLI(t *testing.T) {
	base := []string{"generate", "--target", "prose:order=4,V=512,bytes=60000,cache=0.3", "--draft", "order=2", "--cache", "",
		"--prompts", "4", "--prompt-len", "32", "--tokens", "300", "--seed", "9", "--json"}
	code, out, errs := runCLI(append(base, "--workers", "1")...)
	if code != diag.ExitOK {
		t.Fatalf("generate: exit %d: %s", code, errs)
	}
	r := decodeJSON(t, "generate", out, "tokens_per_target_call", "acceptance", "mean_accepted_length", "speedup", "verdict", "provenance", "per_prompt")
	if v := r["verdict"].(map[string]any)["verdict"]; v != "not_detected" {
		t.Errorf("token verification: verdict %v", v)
	}
	if !strings.Contains(errs, "seed 9") {
		t.Errorf("master seed not printed: %q", errs)
	}
	_, out2, _ := runCLI(append(base, "--workers", "3")...)
	var r2 map[string]any
	_ = json.Unmarshal([]byte(out2), &r2)
	for _, k := range []string{"emitted", "target_calls", "speedup", "mean_beta"} {
		if r[k] != r2[k] {
			t.Errorf("%s differs between 1 and 3 workers: %v vs %v", k, r[k], r2[k])
		}
	}
	if code, _, errs := runCLI(append(base, "--algo", "mutant-always-accept")...); code != diag.ExitViolated {
		t.Errorf("mutant: exit %d, want %d: %s", code, diag.ExitViolated, errs)
	}
	for _, bad := range [][]string{{"--drafter", "magic"}, {"--policy", "conf:2"}, {"--gamma", "0"}, {"--target", "poetry:order=3"}, {"--draft", "order=9"}} {
		if code, _, errs := runCLI(append(base, bad...)...); code != diag.ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", bad, code, diag.ExitUsage, errs)
		}
	}
}
