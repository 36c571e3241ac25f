package cli

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
)

// TestInapplicableFlags runs each command with a flag that does not apply
// to its mode or drafter: each is refused with exit 2 and one line naming
// the flag and why, before anything runs (issue 27: never ignored).
func TestInapplicableFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		// an external implementation's flags on an in-process check
		{[]string{"check", "--mode", "tree", "--source", "markov:V=3"}, "--mode does not apply here: it configures an external"},
		{[]string{"check", "--batch", "8", "--source", "markov:V=3"}, "--batch does not apply here"},
		{[]string{"check", "--rows", "greedy", "--source", "markov:V=3"}, "--rows does not apply here"},
		{[]string{"check", "--timeout", "1s", "--source", "markov:V=3"}, "--timeout does not apply here"},
		{[]string{"check", "--temperature", "0.5", "--source", "markov:V=3"}, "--temperature does not apply here"},
		{[]string{"check", "--top-k", "2", "--source", "markov:V=3"}, "--top-k does not apply here"},
		{[]string{"check", "--top-p", "0.5", "--source", "markov:V=3"}, "--top-p does not apply here"},
		{[]string{"check", "--min-p", "0.1", "--source", "markov:V=3"}, "--min-p does not apply here"},
		// an in-process rule's flags on an external check (the command
		// would never be started: the refusal comes first)
		{[]string{"check", "--external", "false", "--algo", "token", "--source", "markov:V=3"}, "--algo does not apply here: it configures an in-process rule's check"},
		{[]string{"check", "--external", "false", "--law-test", "--source", "markov:V=3"}, "--law-test does not apply here"},
		{[]string{"check", "--external", "false", "--skip-law-test", "--source", "markov:V=3"}, "--skip-law-test does not apply here"},
		{[]string{"check", "--external", "false", "--law-every", "2", "--source", "markov:V=3"}, "--law-every does not apply here"},
		{[]string{"check", "--external", "false", "--k", "2", "--source", "markov:V=3"}, "--mode tree"},
		{[]string{"check", "--external", "false", "--delay", "1", "--source", "markov:V=3"}, "--delay configures the in-process"},
		// the drafter's flags on a drafter that does not read them
		{[]string{"check", "--algo", "token", "--k", "2", "--source", "markov:V=3"}, "verifies a single chain"},
		{[]string{"check", "--algo", "specinfer", "--draft", "iid", "--branch", "2,1", "--source", "markov:V=3"}, "--branch does not apply to drafter iid"},
		{[]string{"check", "--algo", "specinfer", "--draft", "wor", "--delay", "1", "--source", "markov:V=3"}, "--delay does not apply to drafter wor"},
		{[]string{"exact", "--algo", "specinfer", "--draft", "iid", "--branch", "2,1", "--p", "1/2,1/2", "--q", "1/2,1/2"}, "--branch does not apply to drafter iid"},
		{[]string{"bench", "--algo", "token", "--k", "3"}, "--k needs a tree rule"},
		{[]string{"bench", "--algo", "specinfer", "--workers", "2"}, "--workers is for chain rules"},
		{[]string{"generate", "--drafter", "chain", "--k", "3"}, "--k does not apply here: drafter chain drafts chains"},
		{[]string{"generate", "--drafter", "lookup", "--k", "3"}, "--k does not apply here: drafter lookup"},
		{[]string{"generate", "--drafter", "chain", "--max-ngram", "2"}, "--max-ngram does not apply here: drafter chain"},
	} {
		code, _, errs := runCLI(c.args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		last := lines[len(lines)-1]
		if code != diag.ExitUsage || !strings.Contains(last, c.want) || !strings.HasPrefix(last, "simulate: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and a line mentioning %q", c.args, code, errs, diag.ExitUsage, c.want)
		}
	}
}
