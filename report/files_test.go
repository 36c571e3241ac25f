package report

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/table"
)

// TestOutputNeverAnInput (issue 12): export --out X of X and merge --out
// into the sweep's cells directory are refused and leave every input
// byte-identical.
func TestOutputNeverAnInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cells := filepath.Join(dir, results.CellsDir)
	os.MkdirAll(cells, 0o755)
	cell := filepath.Join(cells, "cell-000000.parquet")
	meta := results.Meta{results.KeyKind: "cell", results.KeyCellID: "algo=token", results.KeyCellIndex: "0", results.KeyCells: "1"}
	rows := []table.Row{{{K: "experiment", V: "verify"}, {K: "algo", V: "token"}, {K: "alpha", V: 0.5}}}
	if err := results.WriteFile(cell, rows, meta); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(cell)
	if err := ExportFile(io.Discard, cell, "csv", cell); !errors.Is(err, fsutil.ErrOutputIsInput) {
		t.Errorf("export X --out X: %v, want ErrOutputIsInput", err)
	}
	for _, out := range []string{cell, filepath.Join(cells, "merged.parquet")} {
		if _, err := Merge(dir, out, false); !errors.Is(err, fsutil.ErrOutputIsInput) {
			t.Errorf("merge --out %s: %v, want ErrOutputIsInput", out, err)
		}
	}
	if after, _ := os.ReadFile(cell); !bytes.Equal(before, after) {
		t.Errorf("the cell file changed")
	}
	if ents, _ := os.ReadDir(cells); len(ents) != 1 {
		t.Errorf("files written into the cells directory: %v", ents)
	}
	// the default output beside the cells is fine, and so is merging again over it
	for range 2 {
		if _, err := Merge(dir, "", false); err != nil {
			t.Fatalf("merge into the default output: %v", err)
		}
	}
}
