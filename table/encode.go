package table

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/specsim/specsim/internal/escape"
)

// SafeValue maps the values encoding/json cannot write (NaN, ±Inf) to
// nil, which it writes null, so that a result is never lost to an
// encoding error and a numeric field stays numeric or null (JavaScript's
// JSON.stringify does the same); every other value is returned unchanged.
// A null is n/a, or an infinity where a quantity can be infinite (a KL
// where π misses the target's support): the text and CSV forms keep
// "+Inf" apart from n/a.
func SafeValue(v any) any {
	f, ok := v.(float64)
	if !ok {
		return v
	}
	if _, bad := nonFinite(f); bad {
		return nil
	}
	return f
}

// nonFinite names a NaN or an infinity.
func nonFinite(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "+Inf", true
	case math.IsInf(f, -1):
		return "-Inf", true
	}
	return "", false
}

// CSVValue formats one value for CSV: floats in Go's shortest round-trip
// form (NaN, n/a, as an empty field like a missing value; +Inf and -Inf
// as such), ints and bools as strconv writes them, anything else with %v.
func CSVValue(v any) string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return ""
		}
		if s, bad := nonFinite(x); bad {
			return s
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// CSVText returns a text field for CSV with formula injection
// neutralised: a field a spreadsheet would evaluate (its first character
// one of = + - @, a tab, CR or LF, or their full-width forms ＝ ＋ － ＠)
// gets a leading apostrophe, which spreadsheets show as text and do not
// display; a field that reads as a number (-1.5, +2e-3, -Inf) and a
// one-character field stay as they are. Every CSV field that is not a
// number this program formatted goes through it: column names and text
// cells of exports, replay's rule names.
func CSVText(s string) string {
	if len(s) < 2 {
		return s
	}
	r, _ := utf8.DecodeRuneInString(s)
	switch r {
	case '=', '+', '-', '@', '\t', '\r', '\n', '＝', '＋', '－', '＠':
	default:
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// CSVTexts returns fields through CSVText (a new slice).
func CSVTexts(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = CSVText(f)
	}
	return out
}

// WriteCSV writes rows as CSV with the header columns; a column a row
// lacks is an empty field. Numbers are written as CSVValue formats them;
// names and text cells go through CSVText.
func WriteCSV(w io.Writer, columns []string, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVTexts(columns)); err != nil {
		return err
	}
	rec := make([]string, len(columns))
	for _, r := range rows {
		for i, c := range columns {
			rec[i] = ""
			if v, ok := r.Get(c); ok {
				rec[i] = CSVValue(v)
				if !isNumber(v) {
					rec[i] = CSVText(rec[i])
				}
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// isNumber reports whether v is a value CSVValue writes as a number.
func isNumber(v any) bool {
	switch v.(type) {
	case float64, int64, int, bool:
		return true
	}
	return false
}

// MarshalIndent is json.MarshalIndent except that values encoding/json
// cannot represent (NaN, ±Inf: an infinite KL, an impossible observation's
// statistic) are written null (SafeValue) rather than failing, and
// characters a terminal acts on (DEL, C1 and bidirectional controls, which
// encoding/json leaves raw) are written as \u escapes
// (internal/escape.JSON): the same value, safe to print.
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	b, err := json.MarshalIndent(v, prefix, indent)
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) {
		b, err = json.MarshalIndent(jsonable(reflect.ValueOf(v)), prefix, indent)
	}
	return escape.JSON(b), err
}

// WriteJSON writes v indented by two spaces and a newline, NaN-safe as
// MarshalIndent.
func WriteJSON(w io.Writer, v any) error {
	b, err := MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

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
// non-finite floats to null and honouring json struct tags (names, "-",
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
		return SafeValue(v.Float())
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
		if v.IsNil() {
			return nil // null, as encoding/json writes a nil map
		}
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
