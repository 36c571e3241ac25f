package gitrev

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestOrKeepsStamped(t *testing.T) {
	if got := Or("abc123"); got != "abc123" {
		t.Fatalf("Or(abc123) = %q", got)
	}
}

// TestOrFallsBackToGit: in this checkout (tests run in the package
// directory) the fallback is HEAD's 40-hex revision, as git reports it.
func TestOrFallsBackToGit(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git rev-parse HEAD: %v (not a checkout, or no git)", err)
	}
	got := Or(Unknown)
	if !regexp.MustCompile(`^[0-9a-f]{40}(\+dirty)?$`).MatchString(got) {
		t.Fatalf("Or(unknown) = %q, want a 40-hex revision", got)
	}
	if !strings.HasPrefix(got, strings.TrimSpace(string(out))) {
		t.Fatalf("Or(unknown) = %q, HEAD is %s", got, out)
	}
}
