//go:build !linux

package run

import (
	"math"
	"time"
)

// ThreadCPU is unavailable off Linux; benchmarks then report no CPU time
// (0).
func ThreadCPU() time.Duration { return 0 }

// CPUName is the processor's model name; unknown ("") off Linux.
func CPUName() string { return "" }

// ProcessCPU is unavailable off Linux: 0, which callers report as n/a.
func ProcessCPU() time.Duration { return 0 }

// LoadAverage is unknown off Linux: NaN.
func LoadAverage() float64 { return math.NaN() }
