package cli

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/gitrev"
)

// TestVersion: 'simulate --version' prints the build information's
// version line (module version, revision or why there is none, Go
// version), the same from any working directory, and exits 0.
func TestVersion(t *testing.T) {
	want := "simulate version " + gitrev.Current().String() + "\n"
	if !strings.Contains(want, gitrev.Current().GoVersion) || !strings.Contains(want, "revision ") {
		t.Fatalf("version line %q lacks the Go version or the revision", want)
	}
	for _, dir := range []string{"", t.TempDir()} {
		if dir != "" {
			t.Chdir(dir)
		}
		code, out, errw := runCLI("--version")
		if code != 0 || out != want || errw != "" {
			t.Fatalf("simulate --version in %q: exit %d, stdout %q, stderr %q; want exit 0 and %q", dir, code, out, errw, want)
		}
	}
}
