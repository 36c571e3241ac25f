//go:build unix

package fsutil

import (
	"os"

	"golang.org/x/sys/unix"
)

// setBlocking clears O_NONBLOCK on f (opened without blocking to refuse
// FIFOs), so reads of a regular file behave as usual.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
