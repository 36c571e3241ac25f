//go:build unix

package fsutil

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockTemp takes the exclusive lock owning a new temporary file: errBusy
// if another process holds it; on a file system without flock the file
// is written unlocked (and no cleanup there can take a lock to remove it).
func lockTemp(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return errBusy
	case errors.Is(err, unix.ENOLCK), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
		return nil
	}
	return err
}

// takeStale reports whether the lock of a temporary file could be taken
// at once: its writer is gone (it is then held until f is closed).
func takeStale(f *os.File) bool {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}
