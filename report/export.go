package report

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/table"

	"github.com/specsim/specsim/data/results"
)

// Export writes table t as CSV (header = the columns in table order; a
// null is an empty field; floats in Go's shortest round-trip form; NaN,
// +Inf, -Inf as such) or JSON ({"columns":[{name,type}], "meta":{...},
// "rows":[{...}]}, non-finite floats as the strings "NaN", "+Inf", "-Inf").
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
		v := struct {
			Columns []results.Column `json:"columns"`
			Meta    results.Meta     `json:"meta"`
			Rows    []table.Row      `json:"rows"`
		}{t.Columns, t.Meta, rows}
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
