//go:build unix

package fsutil

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with id pid exists (one of
// another user counts: signal 0 is then refused, not unknown).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
