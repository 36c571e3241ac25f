package fsutil_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
)

// snapshot maps every path under dir to its kind and content hash (a
// link to its target), to tell whether anything there changed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			m[p] = "link " + l
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			m[p] = fmt.Sprintf("file %x", sha256.Sum256(b))
		default:
			m[p] = d.Type().String()
		}
		return nil
	})
	return m
}

// linkLayouts generates the planted links of issue 30's H1: at each
// place an output directory's writer touches (an output file, its
// subdirectory, the run's lock, the report at the top), a link to each
// kind of target outside or inside (a file, a directory, nothing, a
// chain of links, a relative path climbing out, a device).
func linkLayouts(out, outside string) (places []string, targets map[string]func() string) {
	places = []string{"csv/verify.csv", "csv", fsutil.LockName, "report.md"}
	targets = map[string]func() string{
		"outside file":     func() string { return filepath.Join(outside, "victim") },
		"outside dir":      func() string { return filepath.Join(outside, "odir") },
		"dangling outside": func() string { return filepath.Join(outside, "odir", "new") },
		"relative climb":   func() string { return "../../" + filepath.Base(outside) + "/victim" },
		"device":           func() string { return "/dev/null" },
		"inside file":      func() string { return filepath.Join(out, "inside") },
		"chain outside": func() string {
			mid := filepath.Join(out, "mid")
			os.Symlink(filepath.Join(outside, "victim"), mid)
			return mid
		},
		"chain via dir": func() string {
			os.Symlink(filepath.Join(outside, "odir"), filepath.Join(out, "middir"))
			return filepath.Join(out, "middir", "f")
		},
	}
	return places, targets
}

// TestConfinedWrites: whatever link is planted in an output directory,
// a run's writes (lock, subdirectory, files) leave everything outside it
// exactly as it was, and each either succeeds, leaving a regular file at
// the output's name inside the directory, or fails with a usage error
// (exit 2) naming the link.
func TestConfinedWrites(t *testing.T) {
	places, targets := linkLayouts("", "")
	for _, place := range places {
		for kind := range targets {
			t.Run(place+"/"+kind, func(t *testing.T) {
				base := t.TempDir()
				out, outside := filepath.Join(base, "results"), filepath.Join(base, "elsewhere")
				os.MkdirAll(filepath.Join(out, "sub"), 0o755)
				os.MkdirAll(filepath.Join(outside, "odir"), 0o755)
				os.WriteFile(filepath.Join(outside, "victim"), []byte("VICTIM"), 0o644)
				os.WriteFile(filepath.Join(out, "inside"), []byte("inside"), 0o644)
				_, targets := linkLayouts(out, outside)
				if place == "csv/verify.csv" {
					os.Mkdir(filepath.Join(out, "csv"), 0o755)
				}
				if err := os.Symlink(targets[kind](), filepath.Join(out, place)); err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, outside)
				unlock, err := fsutil.LockDir(out)
				usage := func(what string, err error) {
					t.Helper()
					if err != nil && diag.KindOf(err) != diag.ErrUsage {
						t.Errorf("%s: %v is not a usage error", what, err)
					}
				}
				usage("LockDir", err)
				if err == nil {
					defer unlock()
					if li, err := os.Lstat(filepath.Join(out, fsutil.LockName)); err != nil || !li.Mode().IsRegular() {
						t.Errorf("the lock is not a regular file in the directory: %v", err)
					}
				}
				rel, _ := fsutil.Confine(out)
				defer rel()
				writes := map[string]error{}
				if err := fsutil.MkdirAll(filepath.Join(out, "csv")); err != nil {
					usage("MkdirAll", err)
				} else {
					writes["csv/verify.csv"] = fsutil.WriteBytes(filepath.Join(out, "csv", "verify.csv"), []byte("$(touch PWNED)"), 0o644)
				}
				writes["report.md"] = fsutil.WriteBytes(filepath.Join(out, "report.md"), []byte("report"), 0o644)
				for name, err := range writes {
					usage(name, err)
					if err == nil {
						if li, err := os.Lstat(filepath.Join(out, name)); err != nil || !li.Mode().IsRegular() {
							t.Errorf("%s: written, but not a regular file in the directory (%v)", name, err)
						}
					}
				}
				if after := snapshot(t, outside); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("outside the output directory changed:\nbefore %v\nafter  %v", before, after)
				}
				for p := range snapshot(t, out) {
					if fsutil.IsTempName(filepath.Base(p)) {
						t.Errorf("temporary file left: %s", p)
					}
				}
			})
		}
	}
}

// An unconfined output named by the user: a link at its name is replaced,
// its target untouched; a link on the way is the user's own path.
func TestLinkAtOutputReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("VICTIM"), 0o644)
	out := filepath.Join(dir, "out.csv")
	os.Symlink(victim, out)
	if err := fsutil.WriteBytes(out, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "VICTIM" {
		t.Errorf("written through the link: %q", b)
	}
	if li, _ := os.Lstat(out); !li.Mode().IsRegular() {
		t.Errorf("the link was kept")
	}
	if err := fsutil.CheckOutput(filepath.Join(dir, "no", "such", "dir", "x")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CheckOutput in a missing directory: %v", err)
	}
}
