//go:build !unix

package fsutil

import "os"

// lockTemp takes no lock where there is no flock.
func lockTemp(*os.File) error { return nil }

// takeStale is false where there is no flock: no writer's liveness can be
// told, so no temporary file is removed.
func takeStale(*os.File) bool { return false }
