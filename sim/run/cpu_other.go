//go:build !linux

package run

import "time"

// threadCPU is unavailable off Linux; benchmarks then report no CPU time
// (0).
func threadCPU() time.Duration { return 0 }
