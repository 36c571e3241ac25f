//go:build !unix

package fsutil

import (
	"errors"
	"os"
)

// LockName is the lock file LockDir creates in a locked directory.
const LockName = ".lock"

// ErrLocked is returned by LockDir when another process holds the lock.
var ErrLocked = errors.New("directory is in use by another run")

// LockDir creates dir; on platforms without flock it takes no lock.
func LockDir(dir string) (unlock func(), err error) { return Lock(dir, LockName, false) }

// Lock creates dir; on platforms without flock it takes no lock.
func Lock(dir, name string, wait bool) (unlock func(), err error) {
	return func() {}, os.MkdirAll(dir, 0o755)
}
