//go:build !unix

package fsutil

import "os"

// Lock creates dir; on platforms without flock it takes no lock.
func Lock(dir, name string, wait bool) (unlock func(), err error) {
	return func() {}, os.MkdirAll(dir, 0o755)
}
