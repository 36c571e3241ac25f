package algos

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling OS thread (the caller
// locks its goroutine to the thread), so that a benchmark on a shared
// machine can report throughput per CPU-second of its own core.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
