package data_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/specsim/specsim/data"
)

// duckScript prints every row of a log, and its key/value metadata, as
// JSON, read by DuckDB's own parquet reader.
const duckScript = `import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const f = process.argv[2].replaceAll("'", "''");
const rows = await con.runAndReadAll("SELECT * FROM read_parquet('" + f + "') ORDER BY prompt_id, step");
const kv = await con.runAndReadAll("SELECT key::VARCHAR AS k, value::VARCHAR AS v FROM parquet_kv_metadata('" + f + "')");
console.log(JSON.stringify({rows: rows.getRowObjectsJson(), kv: kv.getRowObjectsJson()}));
`

// duckdbDir installs @duckdb/node-api with npm into a scratch directory
// outside the repository (reused between runs) and returns it, or skips
// the test with the reason.
func duckdbDir(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("DuckDB interop: node is not installed (needs node and npm to install @duckdb/node-api); skipped")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("DuckDB interop: npm is not installed; skipped")
	}
	_ = node
	dir := os.Getenv("SPECSIM_DUCKDB_DIR")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "specsim-duckdb-node")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api")); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Skipf("DuckDB interop: cannot make %s: %v; skipped", dir, err)
	}
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"specsim-duckdb-interop","private":true,"type":"module"}`), 0o644)
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "@duckdb/node-api")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("DuckDB interop: 'npm install @duckdb/node-api' failed in %s (no registry access?): %v\n%s", dir, err, out)
	}
	return dir
}

// TestDuckDBRoundTrip writes a dense and a sparse log here and reads them
// with DuckDB: every column of every row, and the provenance metadata,
// must come back with the values written.
func TestDuckDBRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("DuckDB interop: skipped in -short mode")
	}
	dir := duckdbDir(t)
	script := filepath.Join(dir, "read_log.mjs")
	if err := os.WriteFile(script, []byte(duckScript), 0o644); err != nil {
		t.Fatal(err)
	}
	pair := markovPair(t, "markov:V=5,order=1,a=0.5,quality=0.5,seed=2")
	for _, sparse := range []int{0, 2} {
		t.Run(fmt.Sprintf("sparse=%d", sparse), func(t *testing.T) {
			pv := data.BuildProvenance("duckdb test", "markov V=5", 77)
			pv.Extra = map[string]string{"note": "a test, with = and ;"}
			path := writeRun(t, pair, data.RunConfig{Steps: 20, Gamma: 2, Seed: 3, StepsPerPrompt: 7, RunID: "duck",
				Sampling: data.Sampling{Temperature: 1, TopP: 1}}, data.WriterOptions{Sparse: sparse, RowGroupBytes: 500, Provenance: pv})
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
			if kv[data.MetaWriter] != "duckdb test" || kv[data.MetaSeed] != "77" || kv["specsim.note"] != "a test, with = and ;" || kv[data.MetaSchemaVersion] != "1" {
				t.Errorf("metadata read by DuckDB: %v", kv)
			}
			r, err := data.Open(path, data.ReadOptions{})
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
				checkInt(t, i, "step", row["step"], want.Step)
				checkInt(t, i, "prompt_id", row["prompt_id"], want.PromptID)
				checkInt(t, i, "gamma", row["gamma"], int64(want.Gamma))
				checkInt(t, i, "vocab_size", row["vocab_size"], int64(want.VocabSize))
				checkInt(t, i, "schema_version", row["schema_version"], int64(want.SchemaVersion))
				for _, s := range [][3]string{{"run_id", fmt.Sprint(row["run_id"]), want.RunID}, {"row_kind", fmt.Sprint(row["row_kind"]), want.RowKind},
					{"layout", fmt.Sprint(row["layout"]), want.Layout}, {"target_model", fmt.Sprint(row["target_model"]), want.TargetModel}} {
					if s[1] != s[2] {
						t.Errorf("row %d %s: DuckDB %q, written %q", i, s[0], s[1], s[2])
					}
				}
				if row["temperature"].(float64) != want.Temperature || row["top_p"].(float64) != want.TopP {
					t.Errorf("row %d: sampling %v %v", i, row["temperature"], row["top_p"])
				}
				checkList(t, i, "draft_tokens", row["draft_tokens"], want.DraftTokens)
				checkList(t, i, "emitted_tokens", row["emitted_tokens"], want.Emitted)
				checkList(t, i, "q_index", row["q_index"], want.QIndex)
				checkList(t, i, "p_nnz", row["p_nnz"], want.PNNZ)
				checkList(t, i, "q", row["q"], want.Q)
				checkList(t, i, "p", row["p"], want.P)
				checkList(t, i, "q_value", row["q_value"], want.QValue)
				checkList(t, i, "p_tail", row["p_tail"], want.PTail)
				i++
			}
			if r.Err() != nil || i != len(got.Rows) || i != 20 {
				t.Fatalf("rows: ours %d (%v), DuckDB %d", i, r.Err(), len(got.Rows))
			}
		})
	}
}

func checkInt(t *testing.T, row int, name string, v any, want int64) {
	t.Helper()
	var got int64
	switch x := v.(type) {
	case float64:
		got = int64(x)
	case string:
		got, _ = strconv.ParseInt(x, 10, 64)
	default:
		t.Errorf("row %d %s: DuckDB value %v of type %T", row, name, v, v)
		return
	}
	if got != want {
		t.Errorf("row %d %s: DuckDB %d, written %d", row, name, got, want)
	}
}

// checkList compares a DuckDB JSON list (numbers arrive as float64) with
// the written column entry for entry, bit-exact after conversion to T.
func checkList[T int32 | float32](t *testing.T, row int, name string, v any, want []T) {
	t.Helper()
	xs, _ := v.([]any)
	if len(xs) != len(want) {
		t.Errorf("row %d %s: DuckDB %d entries, written %d", row, name, len(xs), len(want))
		return
	}
	for k, x := range xs {
		if T(x.(float64)) != want[k] {
			t.Errorf("row %d %s[%d]: DuckDB %v, written %v (bit-exact expected)", row, name, k, x, want[k])
			return
		}
	}
}
