package fsutil

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Temporary files are named ".<base>.tmp-<pid>@<host>-<16 hex digits>"
// (the process id and host are for a person reading the directory) and
// are owned by an exclusive advisory lock (flock) that their writer takes
// before writing a byte and holds until the file is renamed into place or
// removed. Liveness is the lock, not the name: a writer in another PID
// namespace, container or host sharing the directory holds its lock as
// long as it runs, and a killed writer's lock is released by the kernel.
// A cleanup (RemoveStale) removes only files of exactly this pattern whose
// lock it can take; a file of any other name (a user's ".notes.tmp-1@x-y")
// is never touched. Where the platform or file system has no flock,
// nothing is removed.

// host is this machine's name as it appears in temporary file names.
var host = func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return strings.NewReplacer("/", "_", "@", "_", "-", "_").Replace(h)
}()

// tempRE is the exact pattern of a temporary file's name.
var tempRE = regexp.MustCompile(`^\..+\.tmp-[0-9]+@[^@/-]+-[0-9a-f]{16}$`)

// IsTempName reports whether name is exactly a temporary file's name, as
// the writers of this package make them.
func IsTempName(name string) bool { return tempRE.MatchString(name) }

// tempName returns a new temporary file name for an output named base.
func tempName(base string) string {
	var r [8]byte
	rand.Read(r[:])
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "@" + host + "-" + hex.EncodeToString(r[:])
}

// errBusy is lockTemp's error when another process holds the lock of a
// file just created (a cleanup that will remove it).
var errBusy = errors.New("temporary file locked by another process")

// createTemp creates and locks the temporary file of the atomic write w,
// after removing the temporary files dead writers left in its directory
// (once per directory and process). It returns the file and its path
// relative to w's root.
func createTemp(w rooted) (*os.File, string, error) {
	dir := filepath.Dir(w.rel)
	removeStale(w.root, dir)
	for range 16 {
		rel := filepath.Join(dir, tempName(filepath.Base(w.rel)))
		f, err := w.root.OpenFile(rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", w.escaped(err)
		}
		if err := lockTemp(f); err != nil {
			f.Close()
			if errors.Is(err, errBusy) {
				continue // a cleanup took it between create and lock; it removes it
			}
			w.root.Remove(rel)
			return nil, "", err
		}
		return f, rel, nil
	}
	return nil, "", &fs.PathError{Op: "createtemp", Path: w.path, Err: fs.ErrExist}
}

// cleaned holds the directories swept in this process.
var cleaned sync.Map

// RemoveStale removes from dir the temporary files of atomic writes whose
// writer is gone (their lock can be taken) and reports how many it
// removed. A file being written (its lock held, by a process of any
// namespace or host), a file of any other name, a link and a directory are
// kept. Each directory is swept once per process; later calls return 0.
func RemoveStale(dir string) int {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return 0
	}
	defer r.Close()
	return removeStale(r, ".")
}

// removeStale is RemoveStale of the directory rel inside root.
func removeStale(root *os.Root, rel string) int {
	key := filepath.Join(root.Name(), rel)
	if abs, err := filepath.Abs(key); err == nil {
		key = abs
	}
	if _, done := cleaned.LoadOrStore(key, true); done {
		return 0
	}
	d, err := root.Open(rel)
	if err != nil {
		return 0
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || !IsTempName(e.Name()) {
			continue
		}
		if removeIfUnlocked(root, filepath.Join(rel, e.Name())) {
			n++
		}
	}
	return n
}

// removeIfUnlocked removes the temporary file rel if it can take its lock
// at once (no writer holds it) and the name still is that file.
func removeIfUnlocked(root *os.Root, rel string) bool {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if !takeStale(f) {
		return false
	}
	fi, err1 := f.Stat()
	li, err2 := root.Lstat(rel)
	if err1 != nil || err2 != nil || !fi.Mode().IsRegular() || !os.SameFile(fi, li) {
		return false
	}
	return root.Remove(rel) == nil
}
