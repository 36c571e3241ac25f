//go:build !unix

package fsutil

// Lock confines dir (creating it); on platforms without flock it takes no
// lock.
func Lock(dir, name string, wait bool) (unlock func(), err error) {
	return Confine(dir)
}
