package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/specsim/specsim/internal/diag"
)

// ErrEscapes is wrapped by the errors of a write whose path, inside an
// output directory, passes through a symbolic link leading outside it
// (a planted csv/ -> /elsewhere); it is a usage error (diag.ErrUsage).
var ErrEscapes = diag.New(diag.ErrUsage, "output path leaves its directory")

// confined is an output directory declared by Confine: its os.Root and
// how many Confine calls hold it.
type confined struct {
	root *os.Root
	refs int
}

var (
	confMu sync.Mutex
	// confDirs maps an output directory's absolute, clean path to its root.
	confDirs = map[string]*confined{}
)

// Confine declares dir an output directory, creating it if needed: until
// release is called, every write of this package to a path under dir
// (WriteFile, WriteBytes, Create, MkdirAll, Lock) is made through one
// os.Root opened at dir, so no symbolic link inside dir (at a file, at a
// subdirectory, at a lock, chained, dangling) makes it write outside:
// a link at an output's own name is replaced by the new file, a link
// on the way to it that leads outside is refused (ErrEscapes). Lock and
// LockDir confine the directory they lock. Calls nest.
func Confine(dir string) (release func(), err error) {
	if err := CheckOutputDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	confMu.Lock()
	defer confMu.Unlock()
	c := confDirs[abs]
	if c == nil {
		r, err := os.OpenRoot(abs)
		if err != nil {
			return nil, err
		}
		c = &confined{root: r}
		confDirs[abs] = c
	}
	c.refs++
	var once sync.Once
	return func() {
		once.Do(func() {
			confMu.Lock()
			defer confMu.Unlock()
			if c.refs--; c.refs == 0 {
				c.root.Close()
				delete(confDirs, abs)
			}
		})
	}, nil
}

// rooted is where a write to a path happens: a root and the path relative
// to it. done releases the root when rootFor opened it for this write.
type rooted struct {
	root *os.Root
	rel  string
	path string // as the caller named it, for messages
	done func()
}

// rootFor returns the root a write of path goes through: the innermost
// confined directory holding path, else path's own directory (so a link
// at path's name is replaced, never followed, in every case).
func rootFor(path string) (rooted, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return rooted{}, err
	}
	if w, ok := confinedFor(abs, path); ok {
		return w, nil
	}
	dir := filepath.Dir(abs)
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		return rooted{}, fmt.Errorf("%w: the directory of %s is %s", ErrNotRegular, path, kindOf(st.Mode()))
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return rooted{}, err
	}
	return rooted{root: r, rel: filepath.Base(abs), path: path, done: func() { r.Close() }}, nil
}

// confinedFor returns the root of the innermost confined directory
// holding abs, if any.
func confinedFor(abs, path string) (rooted, bool) {
	confMu.Lock()
	best, bestRel := "", ""
	for dir := range confDirs {
		rel, err := filepath.Rel(dir, abs)
		if err == nil && filepath.IsLocal(rel) && rel != "." && len(dir) > len(best) {
			best, bestRel = dir, rel
		}
	}
	if best != "" {
		c := confDirs[best]
		c.refs++
		confMu.Unlock()
		release := func() {
			confMu.Lock()
			defer confMu.Unlock()
			if c.refs--; c.refs == 0 {
				c.root.Close()
				delete(confDirs, best)
			}
		}
		return rooted{root: c.root, rel: bestRel, path: path, done: release}, true
	}
	confMu.Unlock()
	return rooted{}, false
}

// escaped wraps an os.Root error that a link leads outside the root.
func (w rooted) escaped(err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%w: %s passes through a symbolic link that leads outside the output directory %s; remove the link or write elsewhere", ErrEscapes, w.path, w.root.Name())
	}
	return err
}

// check returns an error wrapping ErrNotRegular if w's destination is a
// run's lock file, a directory, device, FIFO or socket, or a symbolic
// link to one of them (so /dev/stdout is not replaced); a missing name, a
// regular file, or a link to a regular file or to nothing is fine (the
// link itself is replaced). Its directory must exist within the root.
func (w rooted) check() error {
	if IsLockName(filepath.Base(w.rel)) {
		return fmt.Errorf("%w: %s is a run's lock file; write the output elsewhere", ErrNotRegular, w.path)
	}
	if d := filepath.Dir(w.rel); d != "." {
		st, err := w.root.Stat(d)
		if err != nil {
			return w.escaped(err)
		}
		if !st.IsDir() {
			return fmt.Errorf("%w: the directory of %s is %s", ErrNotRegular, w.path, kindOf(st.Mode()))
		}
	}
	li, err := w.root.Lstat(w.rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return w.escaped(err)
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		// only to describe the target: the link is replaced, not followed
		st, err := os.Stat(filepath.Join(w.root.Name(), w.rel))
		if err != nil || st.Mode().IsRegular() {
			return nil
		}
		return fmt.Errorf("%w: the output %s is a symbolic link to %s; outputs are regular files (give a path in a directory)", ErrNotRegular, w.path, kindOf(st.Mode()))
	}
	if !li.Mode().IsRegular() {
		return fmt.Errorf("%w: the output %s is %s; outputs are regular files (give a path in a directory)", ErrNotRegular, w.path, kindOf(li.Mode()))
	}
	return nil
}

// MkdirAll creates the directory path and its parents as os.MkdirAll
// does, through the root of the output directory holding path (Confine),
// so a link inside it leading outside is refused (ErrEscapes) instead of
// creating directories elsewhere.
func MkdirAll(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	w, ok := confinedFor(abs, path)
	if !ok {
		return os.MkdirAll(path, 0o755)
	}
	defer w.done()
	return w.escaped(w.root.MkdirAll(w.rel, 0o755))
}
