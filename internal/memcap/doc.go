// Package memcap is the memory cap of the fuzz targets (issue 23): a
// decoder given hostile bytes must not allocate in proportion to the
// sizes those bytes declare. Cap runs one decode and fails the test when
// it allocated more than its limit (runtime.MemStats.TotalAlloc, which
// counts every allocation, freed or not, so a short-lived gigabyte is
// caught too).
//
// It imports only the standard library and is meant for tests.
package memcap // import "github.com/specsim/specsim/internal/memcap"
