//go:build !linux

package algos

import "time"

// threadCPU is unavailable off Linux; benchmarks then report wall time.
func threadCPU() time.Duration { return 0 }
