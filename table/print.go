package table

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/specsim/specsim/internal/escape"
)

// PrintRows writes rows as an aligned text table with the columns of the
// first row; floats are printed with 6 significant digits, NaN as NA, and
// names and values from input are escaped for a terminal (internal/escape).
func PrintRows(w io.Writer, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var head []string
	for _, kv := range rows[0] {
		head = append(head, escape.Terminal(kv.K))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		var cells []string
		for _, kv := range rows[0] {
			v, _ := r.Get(kv.K)
			if f, ok := v.(float64); ok {
				if math.IsNaN(f) {
					cells = append(cells, NA)
				} else {
					cells = append(cells, fmt.Sprintf("%.6g", f))
				}
			} else {
				cells = append(cells, escape.Terminal(fmt.Sprint(v)))
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
