package experiments

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/table"
)

// The cell formats of the experiments' tables (Experiment.Tables).

// dec is column k of r with d decimals (NA when absent or NaN).
func dec(r Row, k string, d int) string { return table.FixedCol(r, k, d) }

// sci formats a small magnitude like 1.2e-16 compactly.
func sci(r Row, k string) string {
	v, ok := r.Float(k)
	if !ok || math.IsNaN(v) {
		return NA
	}
	return fmt.Sprintf("%.1e", v)
}

// tick is a boolean column as ✓ or ✗ (other values as they print, NA
// when absent).
func tick(r Row, k string) string {
	v, ok := r.Get(k)
	if !ok {
		return NA
	}
	if b, ok := v.(bool); ok {
		if b {
			return "✓"
		}
		return "✗"
	}
	return fmt.Sprint(v)
}

// bracket is the interval [lo, hi] with d decimals, NA when both ends
// are missing.
func bracket(r Row, lo, hi string, d int) string {
	a, b := dec(r, lo, d), dec(r, hi, d)
	if a == NA && b == NA {
		return NA
	}
	return "[" + a + ", " + b + "]"
}
