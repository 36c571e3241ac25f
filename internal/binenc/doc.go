// Package binenc writes and reads the versioned binary payloads of the
// harness's states (sim/check's shard states and the exact sums of
// sim/stattest): unsigned and signed varints, float64s as their bits and
// length-prefixed byte strings, appended to a slice by the Append
// functions and read back by a Reader that refuses, with an error and
// never a panic, a payload cut short or a length beyond its budget.
package binenc // import "github.com/specsim/specsim/internal/binenc"
