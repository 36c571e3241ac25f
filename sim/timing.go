package sim

import "sync/atomic"

// timing counts the benchmarks running in the process (BeginTiming).
var timing atomic.Int32

// BeginTiming marks a benchmark running until the returned end is called;
// Timing reports whether any is. Rules that keep values derived from rows
// (package algos keeps warped draft laws and decisions found by the rows'
// values: a pool's rows recur at every step) compute them afresh while
// one runs: a benchmark times what an engine computes, and an engine's
// rows do not recur as a pool's do. Outcomes are the same either way.
func BeginTiming() (end func()) {
	timing.Add(1)
	return func() { timing.Add(-1) }
}

// Timing reports whether a benchmark is running (BeginTiming).
func Timing() bool { return timing.Load() > 0 }
