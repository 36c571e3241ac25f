package data

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
)

// ImportJSONL reads JSON lines, one LogRow per line with the parquet
// column names as keys (what data/logger/logger.py writes when pyarrow is
// absent), validates each and writes it to w. Non-finite logits cannot be
// written in JSON; the logger writes -Inf as the lowest float32
// (-3.4028235e38), whose probability is 0 after any transform as well. It
// returns the number of rows written.
func ImportJSONL(in io.Reader, w *Writer) (int64, error) {
	return importJSONL(in, w.WriteRow, w.Rows)
}

// ImportTreeJSONL reads JSON lines, one TreeLogRow per line (what
// data/logger/logger.py --tree writes when pyarrow is absent), validates
// each and writes it to w; it returns the number of rows written.
func ImportTreeJSONL(in io.Reader, w *TreeWriter) (int64, error) {
	return importJSONL(in, w.WriteRow, w.Rows)
}

// importJSONL decodes each non-empty JSON line of in as an R and writes
// it with write (which validates it); rows is the count written so far.
func importJSONL[R any](in io.Reader, write func(*R) error, rows func() int64) (int64, error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var line int64
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var r R
		if err := json.Unmarshal(b, &r); err != nil {
			return rows(), fmt.Errorf("%w: line %d: %v", ErrInvalid, line, err)
		}
		if err := write(&r); err != nil {
			return rows(), fmt.Errorf("line %d: %w", line, err)
		}
	}
	return rows(), sc.Err()
}

// jsonlVersion returns the schema_version of the first non-empty line of
// the JSON-lines file at path (SchemaVersion for an empty file).
func jsonlVersion(path string) (int, error) {
	in, err := fsutil.Open(path)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var h struct {
			SchemaVersion int `json:"schema_version"`
		}
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			return 0, fmt.Errorf("%w: line 1: %v", ErrInvalid, err)
		}
		return h.SchemaVersion, nil
	}
	return SchemaVersion, sc.Err()
}

// ImportFile converts the JSON-lines log at inPath (see ImportJSONL; a
// first line of schema_version 2, ImportTreeJSONL) into
// a parquet log at outPath with provenance pv, and returns the rows
// written; each step's rows are checked against budget bytes as a reader
// will check them (0: sim.DefaultMemBudget). Errors about the content
// match ErrInvalid.
func ImportFile(inPath, outPath string, pv Provenance, budget int64) (int64, error) {
	if err := results.CheckOutput(outPath, inPath); err != nil {
		return 0, diag.Usage(err)
	}
	version, err := jsonlVersion(inPath)
	if err != nil {
		return 0, err
	}
	in, err := fsutil.Open(inPath)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	var n int64
	if version == TreeSchemaVersion {
		err = WriteTreeLog(outPath, WriterOptions{Provenance: pv, MemBudget: budget}, func(w *TreeWriter) error {
			n, err = ImportTreeJSONL(in, w)
			return err
		})
		return n, err
	}
	err = WriteLog(outPath, WriterOptions{Provenance: pv, MemBudget: budget}, func(w *Writer) error {
		n, err = ImportJSONL(in, w)
		return err
	})
	return n, err
}
