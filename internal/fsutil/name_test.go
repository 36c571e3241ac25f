package fsutil_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/fsutil"
)

// Names from input: a plain name joins under the directory; anything that
// could leave it, hide, or carry markup or control characters is refused,
// and whatever Under accepts stays directly inside dir.
func TestUnder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, ok := range []string{"leviathan-table1", "mysweep-vs-source.V", "a_b.c", "0", strings.Repeat("x", fsutil.MaxNameLen)} {
		p, err := fsutil.Under(dir, ok, ".csv")
		if err != nil || p != filepath.Join(dir, ok+".csv") {
			t.Errorf("Under(%q) = %q, %v", ok, p, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../../victim/PWNED", "a/b", `a\b`, "/etc/passwd", ".hidden", "-rf",
		"x\x00y", "x\ny", "x y", "<script>", "$(id)", "é", strings.Repeat("x", fsutil.MaxNameLen+1), "a/../../b"} {
		if p, err := fsutil.Under(dir, bad, ".png"); !errors.Is(err, fsutil.ErrBadName) {
			t.Errorf("Under(%q) = %q, %v; want ErrBadName", bad, p, err)
		}
	}
	// whatever is accepted is a file directly in dir
	f := func(name string) {
		p, err := fsutil.Under(dir, name, ".pdf")
		if err != nil {
			return
		}
		if filepath.Dir(p) != dir {
			t.Errorf("Under(%q) = %q, outside %s", name, p, dir)
		}
	}
	for _, n := range []string{"a..b", "..a", "a..", "a.", "x-vs-..", "...."} {
		f(n)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
