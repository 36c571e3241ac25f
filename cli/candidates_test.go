package cli

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/sim/draft"
)

// One owner of k: every command that takes --k defaults to draft.DefaultK
// for a tree rule (the JSON's k) and to draft.ChainK for a chain rule
// (exact then runs the chain engine), and refuses a k outside
// 1..draft.MaxK with exit 2 naming k.
func TestDefaultK(t *testing.T) {
	t.Parallel()
	pq := []string{"-p", "1/3,2/3", "-q", "2/3,1/3"}
	defaults := map[string][]string{
		"exact": append([]string{"exact", "--algo", "specinfer", "--gamma", "2", "--json"}, pq...),
		"check": {"check", "--algo", "specinfer", "--source", "markov:V=4", "--trials", "2000", "--json"},
		"bound": append([]string{"bound", "--json"}, pq...),
	}
	for name, args := range defaults {
		code, out, errw := runCLI(args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errw)
		}
		if m := decodeJSON(t, name, out, "k"); m["k"] != float64(draft.DefaultK) {
			t.Errorf("%s: default k = %v, want draft.DefaultK = %d", name, m["k"], draft.DefaultK)
		}
	}
	// a chain rule takes draft.ChainK: exact runs the chain engine, whose
	// JSON has gamma and no k
	code, out, errw := runCLI(append([]string{"exact", "--algo", "token", "--gamma", "2", "--json"}, pq...)...)
	if m := decodeJSON(t, "exact token", out, "gamma"); code != 0 || m["k"] != nil {
		t.Errorf("exact token: exit %d, k %v (%s); want the chain engine", code, m["k"], errw)
	}
	for _, k := range []string{"0", "65"} {
		for name, args := range map[string][]string{
			"exact":    append([]string{"exact", "--algo", "specinfer", "--k", k}, pq...),
			"check":    {"check", "--algo", "specinfer", "--source", "markov:V=4", "--trials", "2000", "--k", k},
			"bound":    append([]string{"bound", "--k", k}, pq...),
			"bench":    {"bench", "--algo", "specinfer", "--k", k},
			"generate": {"generate", "--drafter", "iid", "--algo", "specinfer", "--k", k},
		} {
			code, _, errw := runCLI(args...)
			if code != 2 || !strings.Contains(errw, "k = "+k+"; use 1 <= k <= 64") {
				t.Errorf("%s --k %s: exit %d, %q; want 2 and the range", name, k, code, errw)
			}
		}
	}
}
