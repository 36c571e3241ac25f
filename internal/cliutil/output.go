package cliutil

import (
	"io"

	"github.com/specsim/specsim/table"
)

// WriteJSON writes v indented. Values encoding/json cannot represent
// (NaN: n/a; ±Inf: an infinite KL, an impossible observation's statistic)
// are written null rather than failing (table.SafeValue).
func WriteJSON(w io.Writer, v any) error { return table.WriteJSON(w, v) }

// PrintRows writes rows as an aligned text table with the columns of the
// first row; floats are printed with 6 significant digits.
func PrintRows(w io.Writer, rows []table.Row) error { return table.PrintRows(w, rows) }
