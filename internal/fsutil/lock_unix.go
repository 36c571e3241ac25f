//go:build unix

package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive advisory lock on dir/name as LockDir does; with
// wait it blocks until the lock is free instead of failing with ErrLocked.
// dir is confined (Confine) while the lock is held, and the lock file is
// opened through its root: a symbolic link planted at the lock's name is
// removed, never followed, so no file outside dir is created.
func Lock(dir, name string, wait bool) (unlock func(), err error) {
	release, err := Confine(dir)
	if err != nil {
		return nil, err
	}
	f, err := openLock(dir, name)
	if err != nil {
		release()
		return nil, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		release()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked (%s); wait for that run to end or use another directory", ErrLocked, dir, filepath.Join(dir, name))
		}
		return nil, err
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
		release()
	}, nil
}

// openLock opens (creating it) the lock file dir/name through dir's root.
func openLock(dir, name string) (*os.File, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if li, err := r.Lstat(name); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if err := r.Remove(name); err != nil {
			return nil, err
		}
	}
	f, err := r.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		w := rooted{root: r, path: filepath.Join(dir, name)}
		return nil, w.escaped(err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: the lock %s is %s; remove it", ErrNotRegular, filepath.Join(dir, name), kindOf(st.Mode()))
	}
	return f, nil
}
