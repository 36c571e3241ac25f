package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/table"

	"github.com/specsim/specsim/data/results"
)

// Export writes table t as CSV (header = the columns in table order; a
// null and a NaN (n/a) are an empty field; floats in Go's shortest
// round-trip form; +Inf and -Inf as such) or JSON ({"columns":[{name,
// type}], "meta":{...}, "rows":[{...}], "infinities":[{row, column,
// value}]}: a numeric column holds numbers and nulls only; NaN and ±Inf
// are null, and "infinities" lists where a null stands for +Inf or -Inf,
// by row index (from 0) and column).
func Export(w io.Writer, t results.Table, format string) error {
	switch format {
	case "csv":
		head := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			head[i] = c.Name
		}
		return table.WriteCSV(w, head, t.Rows)
	case "json":
		rows := t.Rows
		if rows == nil {
			rows = []table.Row{}
		}
		type infinity struct {
			Row    int    `json:"row"`
			Column string `json:"column"`
			Value  string `json:"value"`
		}
		infs := []infinity{}
		for i, r := range rows {
			for _, kv := range r {
				if f, ok := kv.V.(float64); ok && math.IsInf(f, 0) {
					infs = append(infs, infinity{i, kv.K, table.CSVValue(f)})
				}
			}
		}
		v := struct {
			Columns    []results.Column `json:"columns"`
			Meta       results.Meta     `json:"meta"`
			Rows       []table.Row      `json:"rows"`
			Infinities []infinity       `json:"infinities"`
		}{t.Columns, t.Meta, rows, infs}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", " ")
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := w.Write(b.Bytes())
		return err
	}
	return diag.Param("format", " %q; use csv or json", format)
}

// ExportFile is the 'report export' command: it writes the parquet table
// at path as format (csv or json) to out, atomically, or to w when out is
// empty. Errors are marked with their kind (internal/diag).
func ExportFile(w io.Writer, path, format, out string) error {
	if format != "csv" && format != "json" {
		return diag.Param("format", " %q; use csv or json", format)
	}
	if out != "" {
		if err := results.CheckOutput(out, path); err != nil {
			return diag.Usage(err)
		}
	}
	t, err := results.ReadFile(path)
	if err != nil {
		return ioErr(err)
	}
	var b bytes.Buffer
	if err := Export(&b, t, format); err != nil {
		return err
	}
	if out != "" {
		if err := results.AtomicWrite(out, b.Bytes()); err != nil {
			return ioErr(err)
		}
		return nil
	}
	_, err = w.Write(b.Bytes())
	return err
}
