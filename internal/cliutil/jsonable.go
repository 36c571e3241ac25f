package cliutil

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
)

// field is one member of an ordered JSON object.
type field struct {
	k string
	v any
}

// object is a JSON object that keeps its fields in struct order.
type object []field

func (o object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

var marshaler = reflect.TypeFor[json.Marshaler]()

// jsonable converts v into values encoding/json can always write, mapping
// non-finite floats to strings and honouring json struct tags (names, "-",
// omitempty, embedded structs).
func jsonable(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type().Implements(marshaler) && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "+Inf"
		case math.IsInf(f, -1):
			return "-Inf"
		}
		return f
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return jsonable(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonable(v.Index(i))
		}
		return out
	case reflect.Map:
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			out[k.String()] = jsonable(v.MapIndex(k))
		}
		return out
	case reflect.Struct:
		var o object
		structFields(v, &o)
		return o
	}
	return v.Interface()
}

func structFields(v reflect.Value, o *object) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if sf.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			structFields(fv, o)
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue
		}
		*o = append(*o, field{name, jsonable(fv)})
	}
}
