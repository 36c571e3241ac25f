package cli

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// TestResemblesText: a violated chain check names the known bug in the
// text (with its thread) and in JSON; a clean check has resembles null
// and says which lossless rule its outcomes look like; a violated tree
// check says the catalogue was not ranked.
func TestResemblesText(t *testing.T) {
	t.Parallel()
	args := []string{"check", "--source", "dirichlet:V=20,a=0.5,beta=0.7", "--gamma", "3", "--trials", "20000", "--seed", "1"}
	code, out, _ := runCLI(append(args, "--algo", "mutant-q-mismatch", "--conform", "token")...)
	if code != diag.ExitViolated || !strings.Contains(out, "\nresembles: temperature mismatch between draft and ratio (https://github.com/huggingface/transformers/issues/47932), log-likelihood ") ||
		!strings.Contains(out, "\nfits: most like mutant-q-mismatch (") {
		t.Errorf("mutant-q-mismatch: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(append(args, "--algo", "token", "--json")...)
	r := decodeJSON(t, "check token", out, "resembles", "fits")
	if code != diag.ExitOK || r["resembles"] != nil {
		t.Errorf("token: exit %d, resembles %v", code, r["resembles"])
	}
	code, out, _ = runCLI(append(args, "--algo", "token")...)
	if !strings.Contains(out, "\nfits: most like the lossless rule token (") || strings.Contains(out, "resembles:") {
		t.Errorf("token: exit %d\n%s", code, out)
	}
	tree := []string{"check", "--algo", "topk-ratio", "--k", "2", "--source", "markov:V=4,order=2", "--gamma", "2", "--seed", "1", "--trials", "20000"}
	if code, out, _ := runCLI(tree...); code != diag.ExitViolated || !strings.Contains(out, "\nresembles: not ranked (") {
		t.Errorf("topk-ratio: exit %d\n%s", code, out)
	}
}
