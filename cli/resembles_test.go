package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
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

// TestResemblesRowsText: a batch tree rule of the catalogue, whose rows
// each follow the rule's law, is named in the text with the rows test that
// shows it and no log-likelihood gap, and in JSON with loglik_gap null and
// the test.
func TestResemblesRowsText(t *testing.T) {
	t.Parallel()
	for _, b := range algos.Bugs() {
		if b.Evidence != algos.ByRows {
			continue
		}
		args := []string{"check", "--algo", b.Mutant, "--k", "2", "--source", "dirichlet:V=20,a=0.5,beta=0.7", "--gamma", "3", "--trials", "20000", "--seed", "1"}
		code, out, _ := runCLI(args...)
		if want := "\nresembles: " + b.Name + " (" + b.Thread + "), shown by the rows-of-a-batch test rows "; code != diag.ExitViolated || !strings.Contains(out, want) || !strings.Contains(out, "no log-likelihood gap is claimed") {
			t.Errorf("%s: exit %d, want %q in\n%s", b.Mutant, code, want, out)
		}
		_, out, _ = runCLI(append(args, "--json")...)
		r := decodeJSON(t, "check "+b.Mutant, out, "resembles")
		var first map[string]any
		if list, _ := r["resembles"].([]any); len(list) > 0 {
			first, _ = list[0].(map[string]any)
		}
		if gap, has := first["loglik_gap"]; first == nil || first["bug"] != b.Name || !has || gap != nil || !strings.HasPrefix(fmt.Sprint(first["test"]), "rows ") {
			t.Errorf("%s: JSON resembles %v; want %q first with loglik_gap null and a rows test", b.Mutant, r["resembles"], b.Name)
		}
	}
}
