package memcap

import (
	"runtime"
	"testing"
)

// DefaultLimit is the cap of the project's fuzz targets: 64 MiB for one
// input of at most a few kilobytes.
const DefaultLimit = 64 << 20

// Cap runs f and fails t when f allocated more than limit bytes; what is
// the input, quoted in the failure. Allocations of other goroutines during
// f count too, so a fuzz target calls it from its only goroutine.
func Cap(t testing.TB, limit uint64, what string, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > limit {
		t.Fatalf("%s: allocated %d MiB, above the cap of %d MiB", what, d>>20, limit>>20)
	}
}
