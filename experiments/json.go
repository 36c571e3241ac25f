package experiments

import "math"

// jsonSafe maps values encoding/json cannot write (NaN, ±Inf) to strings
// "NaN", "+Inf", "-Inf", so that a result is never lost to an encoding
// error; every other value is returned unchanged.
func jsonSafe(v any) any {
	f, ok := v.(float64)
	if !ok {
		return v
	}
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return f
}
