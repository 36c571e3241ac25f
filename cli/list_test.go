package cli

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
)

// TestListMarkdown: 'list --markdown' prints the rule table of docs/rules.md, one
// row per registered rule, and plain 'list' one line per rule after its
// header.
func TestListMarkdown(t *testing.T) {
	t.Parallel()
	n := len(algos.All()) + len(algos.AllTree())
	code, out, _ := runCLI("list", "--markdown")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != diag.ExitOK || len(lines) != n+2 || !strings.HasPrefix(lines[0], "| name | kind | law |") ||
		!strings.HasPrefix(lines[2], "| `block` | rule | yes |") {
		t.Fatalf("list --markdown: exit %d, %d lines for %d rules:\n%s", code, len(lines), n, out)
	}
	code, out, _ = runCLI("list")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != diag.ExitOK || len(lines) != n+1 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("list: exit %d, %d lines for %d rules:\n%s", code, len(lines), n, out)
	}
}
