package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/specsim/specsim/internal/cliutil"

	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
)

// Export writes table t as CSV (header = the columns in table order; a
// null is an empty field; floats in Go's shortest round-trip form; NaN,
// +Inf, -Inf as such) or JSON ({"columns":[{name,type}], "meta":{...},
// "rows":[{...}]}, non-finite floats as the strings "NaN", "+Inf", "-Inf").
func Export(w io.Writer, t results.Table, format string) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		head := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			head[i] = c.Name
		}
		if err := cw.Write(head); err != nil {
			return err
		}
		for _, r := range t.Rows {
			rec := make([]string, len(t.Columns))
			for i, c := range t.Columns {
				if v, ok := r.Get(c.Name); ok {
					rec[i] = csvValue(v)
				}
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	case "json":
		rows := t.Rows
		if rows == nil {
			rows = []experiments.Row{}
		}
		v := struct {
			Columns []results.Column  `json:"columns"`
			Meta    results.Meta      `json:"meta"`
			Rows    []experiments.Row `json:"rows"`
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
	return fmt.Errorf("--format %q; use csv or json", format)
}

func csvValue(v any) string {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "+Inf"
		case math.IsInf(x, -1):
			return "-Inf"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a parquet results file as CSV or JSON (for tools without a parquet reader)",
		ArgsUsage: "FILE.parquet",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "csv", Usage: "csv or json"},
			&cli.StringFlag{Name: "out", Usage: "output `FILE` (default stdout)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cliutil.Usage(fmt.Errorf("export needs one parquet file (e.g. results/runs/multidraft/merged.parquet)"))
			}
			format := c.String("format")
			if format != "csv" && format != "json" {
				return cliutil.Usage(fmt.Errorf("--format %q; use csv or json", format))
			}
			t, err := results.ReadFile(c.Args().First())
			if err != nil {
				return cliutil.IO(err)
			}
			var b bytes.Buffer
			if err := Export(&b, t, format); err != nil {
				return err
			}
			if out := c.String("out"); out != "" {
				if err := results.AtomicWrite(out, b.Bytes()); err != nil {
					return cliutil.IO(err)
				}
				return nil
			}
			_, err = c.App.Writer.Write(b.Bytes())
			return err
		},
	}
}
