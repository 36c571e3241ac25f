package data_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/data"
)

// TestDuckDBTreeLog writes a tree log here and reads it with DuckDB's own
// parquet reader: every column of every row, and the schema version in
// the metadata, come back with the values written.
func TestDuckDBTreeLog(t *testing.T) {
	if testing.Short() {
		t.Skip("DuckDB interop: skipped in -short mode")
	}
	dir := duckdbDir(t)
	script := filepath.Join(dir, "read_log.mjs")
	if err := os.WriteFile(script, []byte(duckScript), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tree.parquet")
	err := data.WriteTreeLog(path, data.WriterOptions{Provenance: data.BuildProvenance("duckdb tree test", "hand", 5)}, func(w *data.TreeWriter) error {
		for i := range 4 {
			st := smallTree()
			st.Step = int64(i)
			if err := w.Write(st); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, path)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var got struct {
		Rows []map[string]any
		KV   []struct{ K, V string }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	kv := map[string]string{}
	for _, e := range got.KV {
		kv[e.K] = e.V
	}
	if kv[data.MetaSchemaVersion] != "2" || kv[data.MetaWriter] != "duckdb tree test" {
		t.Errorf("metadata read by DuckDB: %v", kv)
	}
	r, err := data.OpenTree(path, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	i := 0
	for r.Next() {
		if i >= len(got.Rows) {
			t.Fatalf("DuckDB returned %d rows, the log has more", len(got.Rows))
		}
		want, row := r.Raw(), got.Rows[i]
		checkInt(t, i, "schema_version", row["schema_version"], int64(want.SchemaVersion))
		checkInt(t, i, "step", row["step"], want.Step)
		checkInt(t, i, "gamma", row["gamma"], int64(want.Gamma))
		if fmt.Sprint(row["row_kind"]) != want.RowKind || fmt.Sprint(row["run_id"]) != want.RunID {
			t.Errorf("row %d: row_kind %v, run_id %v", i, row["row_kind"], row["run_id"])
		}
		checkList(t, i, "node_parent", row["node_parent"], want.NodeParent)
		checkList(t, i, "node_token", row["node_token"], want.NodeToken)
		checkList(t, i, "node_q", row["node_q"], want.NodeQ)
		checkList(t, i, "node_p", row["node_p"], want.NodeP)
		checkList(t, i, "path", row["path"], want.Path)
		checkList(t, i, "emitted_tokens", row["emitted_tokens"], want.Emitted)
		checkList(t, i, "q", row["q"], want.Q)
		checkList(t, i, "p", row["p"], want.P)
		i++
	}
	if r.Err() != nil || i != len(got.Rows) || i != 4 {
		t.Fatalf("rows: ours %d (%v), DuckDB %d", i, r.Err(), len(got.Rows))
	}
}
