package fsutil

import "github.com/specsim/specsim/internal/diag"

// LockName is the lock file LockDir creates in a locked directory.
const LockName = ".lock"

// ErrLocked is returned by LockDir when another process holds the lock;
// it is a usage error (diag.ErrUsage).
var ErrLocked = diag.New(diag.ErrUsage, "directory is in use by another run")

// LockDir takes an exclusive advisory lock (flock) on dir/.lock, creating
// dir if needed, and returns the function that releases it. The lock is
// released by the kernel if the process dies, so a killed run never
// leaves a stale lock behind. It returns an error wrapping ErrLocked at
// once, without waiting, if another process holds it. On platforms
// without flock it only creates dir and takes no lock.
func LockDir(dir string) (unlock func(), err error) { return Lock(dir, LockName, false) }
