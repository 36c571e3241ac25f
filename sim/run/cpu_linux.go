package run

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time (user and system) of the calling OS
// thread; the caller locks its goroutine to the thread. A benchmark's
// workers measure their own CPU this way, so that another job on the
// machine, or another benchmark of the same process, is not counted.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
