package fsutil_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/internal/fsutil"
)

func TestCheckNotInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.parquet")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.parquet")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{in, link, hard, filepath.Join(dir, ".", "in.parquet")} {
		if err := fsutil.CheckNotInput(out, "missing", in); !errors.Is(err, fsutil.ErrOutputIsInput) {
			t.Errorf("CheckNotInput(%s, %s) = %v, want ErrOutputIsInput", out, in, err)
		}
	}
	other := filepath.Join(dir, "other.parquet")
	if err := fsutil.CheckNotInput(other, in); err != nil {
		t.Errorf("a new output: %v", err)
	}
	os.WriteFile(other, []byte("x"), 0o644) // same content, another file
	if err := fsutil.CheckNotInput(other, in); err != nil {
		t.Errorf("a different file with equal content: %v", err)
	}
}

func TestWriteFileKeepsOldOnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := fsutil.WriteFile(p, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := fsutil.WriteFile(p, func(w io.Writer) error {
		io.WriteString(w, "half of the new")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old" {
		t.Errorf("after a failed write the file holds %q, want the previous %q", got, "old")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
	if err := fsutil.WriteFile(p, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Errorf("file holds %q, want new", got)
	}
}

// TestLockDir: a second lock on the same directory fails at once, from
// this process and from another one, and succeeds after release.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	unlock, err := fsutil.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsutil.LockDir(dir); !errors.Is(err, fsutil.ErrLocked) {
		t.Errorf("second lock in-process: %v, want ErrLocked", err)
	}
	if flock, err := exec.LookPath("flock"); err == nil {
		// util-linux flock -n exits 1 when the lock is held.
		cmd := exec.Command(flock, "-n", filepath.Join(dir, fsutil.LockName), "true")
		if err := cmd.Run(); err == nil {
			t.Errorf("another process took the lock while it was held")
		}
	}
	unlock()
	unlock2, err := fsutil.LockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
}
