//go:build !unix

package fsutil

import "os"

// setBlocking is a no-op where files have no O_NONBLOCK.
func setBlocking(*os.File) error { return nil }
