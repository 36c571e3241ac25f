package fsutil_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
)

// Issue 23, class 2: outputs are regular files. A device, a FIFO, a
// socket, a directory, a lock file and a link to any of them are refused
// by CheckOutput and by every atomic writer, and stay as they were; a
// link to a regular file is replaced by the new file (issue 30: never
// written through), its target left as it was.
func TestOutputsAreRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	lock := filepath.Join(dir, fsutil.LockName)
	os.WriteFile(lock, nil, 0o644)
	linkToFifo := filepath.Join(dir, "to-fifo")
	os.Symlink(fifo, linkToFifo)
	linkToNull := filepath.Join(dir, "stdout")
	os.Symlink("/dev/null", linkToNull)
	bad := []string{"/dev/null", fifo, sock, sub, lock, filepath.Join(dir, ".lock-shard-0-of-2"), linkToFifo, linkToNull}
	os.WriteFile(bad[5], nil, 0o644)
	for _, out := range bad {
		before, _ := os.Lstat(out)
		err := fsutil.CheckOutput(out)
		if !errors.Is(err, fsutil.ErrNotRegular) || diag.KindOf(err) != diag.ErrUsage {
			t.Errorf("CheckOutput(%s) = %v; want ErrNotRegular, a usage error", out, err)
		}
		if err := fsutil.WriteBytes(out, []byte("x"), 0o644); !errors.Is(err, fsutil.ErrNotRegular) {
			t.Errorf("WriteBytes(%s) = %v; want ErrNotRegular", out, err)
		}
		if f, err := fsutil.Create(out); !errors.Is(err, fsutil.ErrNotRegular) {
			t.Errorf("Create(%s) = %v; want ErrNotRegular", out, err)
			if f != nil {
				f.Abort()
			}
		}
		if after, _ := os.Lstat(out); before.Mode() != after.Mode() || before.ModTime() != after.ModTime() || before.Size() != after.Size() {
			t.Errorf("%s changed: %v -> %v", out, before.Mode(), after.Mode())
		}
	}
	// a link to a regular file: replaced by the new file, the target kept
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := fsutil.WriteBytes(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if li, _ := os.Lstat(link); !li.Mode().IsRegular() {
		t.Errorf("the link was kept: %v", li.Mode())
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Errorf("written through the link: target holds %q", b)
	}
	if b, _ := os.ReadFile(link); string(b) != "new" {
		t.Errorf("the output holds %q", b)
	}
	if err := fsutil.CheckOutputDir(fifo); !errors.Is(err, fsutil.ErrNotRegular) {
		t.Errorf("CheckOutputDir(fifo) = %v", err)
	}
	if err := fsutil.CheckOutputDir(filepath.Join(dir, "new")); err != nil {
		t.Errorf("CheckOutputDir(new) = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 9 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("temporary files left: %s", strings.Join(names, " "))
	}
}

// Inputs are opened without blocking: a FIFO with no writer (where open
// would block, deaf to Ctrl-C) and a device are refused at once; a
// regular file reads normally, and ReadFile refuses one above its limit.
func TestOpenDoesNotBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := fsutil.Open(fifo)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, fsutil.ErrNotRegular) {
			t.Errorf("Open(fifo) = %v; want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open(fifo) blocked")
	}
	for _, p := range []string{"/dev/zero", dir} {
		if _, err := fsutil.ReadFile(p, 10); !errors.Is(err, fsutil.ErrNotRegular) {
			t.Errorf("ReadFile(%s) = %v; want ErrNotRegular", p, err)
		}
	}
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, []byte("0123456789"), 0o644)
	if b, err := fsutil.ReadFile(reg, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := fsutil.ReadFile(reg, 9); !errors.Is(err, fsutil.ErrTooLarge) || diag.KindOf(err) != diag.ErrUsage {
		t.Errorf("ReadFile over the limit = %v", err)
	}
}
