//go:build !linux

package run

import "time"

// processCPU is unavailable off Linux; benchmarks then report no CPU time
// (0).
func processCPU() time.Duration { return 0 }
