package table

import (
	"math"
	"slices"
	"sort"
)

// Num returns column k of r as float64, NaN when absent or not numeric.
func Num(r Row, k string) float64 {
	v, ok := r.Float(k)
	if !ok {
		return math.NaN()
	}
	return v
}

// Find returns the first row of rows with every column kv[2i] formatting
// (Row.String) as kv[2i+1], or nil when none has.
func Find(rows []Row, kv ...string) Row {
	for _, r := range rows {
		if Eq(kv...)(r) {
			return r
		}
	}
	return nil
}

// Where returns the rows for which keep holds.
func Where(rows []Row, keep func(Row) bool) []Row {
	var out []Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// Eq is a filter: every column kv[2i] formats (Row.String) as kv[2i+1].
func Eq(kv ...string) func(Row) bool {
	return func(r Row) bool {
		for i := 0; i+1 < len(kv); i += 2 {
			if r.String(kv[i]) != kv[i+1] {
				return false
			}
		}
		return true
	}
}

// And is the filter that holds when every one of fs does.
func And(fs ...func(Row) bool) func(Row) bool {
	return func(r Row) bool {
		for _, f := range fs {
			if !f(r) {
				return false
			}
		}
		return true
	}
}

// Distinct returns the sorted distinct numeric values of column k.
func Distinct(rows []Row, k string) []float64 {
	var out []float64
	for _, r := range rows {
		v := Num(r, k)
		if !math.IsNaN(v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	sort.Float64s(out)
	return out
}

// DistinctS returns the distinct values of column k in order of first
// appearance.
func DistinctS(rows []Row, k string) []string {
	var out []string
	for _, r := range rows {
		if v := r.String(k); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
