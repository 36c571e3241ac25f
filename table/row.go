package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// KV is one named value of a Row: float64, int64, string or bool.
type KV struct {
	K string
	V any
}

// Row is one result row: an ordered list of columns.
type Row []KV

// Get returns the value of column k and whether it exists.
func (r Row) Get(k string) (any, bool) {
	for _, kv := range r {
		if kv.K == k {
			return kv.V, true
		}
	}
	return nil, false
}

// Float returns column k as float64 (ints convert), or NaN-free zero and
// false if it is absent or not numeric.
func (r Row) Float(k string) (float64, bool) {
	v, ok := r.Get(k)
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

// String returns column k formatted with %v.
func (r Row) String(k string) string {
	v, ok := r.Get(k)
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

// MarshalJSON writes the row as a JSON object with its columns in order;
// non-finite floats are written as by SafeValue.
func (r Row) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.K)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(SafeValue(kv.V))
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", kv.K, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Cell is one point of an experiment's grid, identified by its ordered
// parameters.
type Cell struct {
	Key []KV
}

// ID renders the key as "k1=v1,k2=v2", the cell's identity.
func (c Cell) ID() string {
	var parts []string
	for _, kv := range c.Key {
		parts = append(parts, fmt.Sprintf("%s=%v", kv.K, kv.V))
	}
	return strings.Join(parts, ",")
}
