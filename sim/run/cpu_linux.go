package run

import (
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ThreadCPU returns the CPU time (user and system) of the calling OS
// thread; the caller locks its goroutine to the thread. A benchmark's
// workers measure their own CPU this way, so that another job on the
// machine, or another benchmark of the same process, is not counted.
func ThreadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// CPUName is the processor's model name from /proc/cpuinfo ("" where
// there is none), for benchmark output ('go test -bench' prints it too).
func CPUName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ProcessCPU returns the CPU time (user and system) of the whole process
// so far, every thread included; a check's trials run on many workers, so
// their cost is the difference of two readings. It is 0 where the kernel
// does not answer.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LoadAverage is the one-minute load average from /proc/loadavg (NaN
// where there is none), recorded beside timings: a timing taken at load 6
// on 2 cores is not one taken at load 0.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
