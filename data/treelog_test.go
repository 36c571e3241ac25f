package data_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/specsim/specsim/data"
)

// smallTree is a valid tree step over V = 4: the root (draft row 0) has
// children node 1 (token 2, draft row 1) and node 2 (token 1), node 1 has
// child node 3 (token 3); one target row per node; the path is 1, 3 and
// the extra token 0.
func smallTree() *data.TreeStep {
	return &data.TreeStep{RunID: "t", PromptID: 1, Step: 2, TargetModel: "p", DraftModel: "q",
		Sampling: data.Sampling{Temperature: 1, TopP: 1}, Kind: data.KindProbs,
		Parent: []int{-1, 0, 0, 1}, Token: []int{-1, 2, 1, 3}, QRow: []int{0, 1, -1, -1}, PRow: []int{0, 1, 2, 3},
		Q:    [][]float32{{0.1, 0.4, 0.5, 0}, {0.25, 0.25, 0.25, 0.25}},
		P:    [][]float32{{0.4, 0.3, 0.2, 0.1}, {0.5, 0, 0.25, 0.25}, {1, 0, 0, 0}, {0.7, 0.1, 0.1, 0.1}},
		Path: []int{1, 3}, Emitted: []int{2, 3, 0}}
}

// TestTreeLogRoundTrip: a tree step written by TreeWriter reads back
// field for field; the file is schema version 2 (metadata and rows), the
// chain reader refuses it naming the tree reader, and the tree reader
// refuses a chain log.
func TestTreeLogRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.parquet")
	want := smallTree()
	err := data.WriteTreeLog(path, data.WriterOptions{Provenance: data.BuildProvenance("test", "hand", 3)}, func(w *data.TreeWriter) error {
		for range 3 {
			if err := w.Write(want); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := data.LogVersion(path); err != nil || v != data.TreeSchemaVersion {
		t.Fatalf("LogVersion = %d, %v; want %d", v, err, data.TreeSchemaVersion)
	}
	r, err := data.OpenTree(path, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for r.Next() {
		n++
		got := r.Step()
		if !slices.Equal(got.Parent, want.Parent) || !slices.Equal(got.Token, want.Token) || !slices.Equal(got.QRow, want.QRow) ||
			!slices.Equal(got.PRow, want.PRow) || !slices.Equal(got.Path, want.Path) || !slices.Equal(got.Emitted, want.Emitted) ||
			got.RunID != "t" || got.PromptID != 1 || got.Step != 2 || r.Raw().Gamma != 2 || r.Raw().SchemaVersion != 2 {
			t.Fatalf("read %+v; wrote %+v", got, want)
		}
		for node := range 4 {
			if !slices.Equal(r.ProcP(node), want.P[want.PRow[node]]) {
				t.Errorf("node %d: target row %v, want %v", node, r.ProcP(node), want.P[want.PRow[node]])
			}
		}
		if r.ProcQ(2) != nil || !slices.Equal(r.ProcQ(1), want.Q[1]) {
			t.Errorf("draft rows: node 1 %v, node 2 %v", r.ProcQ(1), r.ProcQ(2))
		}
	}
	if r.Err() != nil || n != 3 {
		t.Fatalf("%d steps, %v", n, r.Err())
	}
	if m := r.Meta(); m.Provenance.Writer != "test" || m.Rows != 3 {
		t.Errorf("meta %+v", m)
	}
	if _, err := data.Open(path, data.ReadOptions{}); !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "tree log") {
		t.Errorf("chain reader on a tree log: %v", err)
	}
	if n, err := data.DecodeFile(path, 0); err != nil || n.Steps != 3 {
		t.Errorf("decode-only: %+v %v", n, err)
	}
	chain := filepath.Join(t.TempDir(), "chain.parquet")
	err = data.WriteLog(chain, data.WriterOptions{}, func(w *data.Writer) error {
		return w.Write(&data.Step{Tokens: []int{1}, Emitted: []int{1, 0}, Kind: data.KindProbs, Sampling: data.Sampling{Temperature: 1, TopP: 1},
			Q: [][]float32{{0.5, 0.5}}, P: [][]float32{{0.5, 0.5}, {0.5, 0.5}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := data.LogVersion(chain); err != nil || v != data.SchemaVersion {
		t.Errorf("LogVersion(chain) = %d, %v", v, err)
	}
	if _, err := data.OpenTree(chain, data.ReadOptions{}); !errors.Is(err, data.ErrInvalid) {
		t.Errorf("tree reader on a chain log: %v", err)
	}
}

// writeRawTree writes rows as they are (no validation), as a broken
// engine would, with the tree log's metadata.
func writeRawTree(t *testing.T, rows []data.TreeLogRow) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[data.TreeLogRow](f, parquet.KeyValueMetadata(data.MetaSchemaVersion, strconv.Itoa(data.TreeSchemaVersion)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// rawSmallTree is smallTree as a TreeLogRow.
func rawSmallTree(t *testing.T) data.TreeLogRow {
	t.Helper()
	path := filepath.Join(t.TempDir(), "one.parquet")
	if err := data.WriteTreeLog(path, data.WriterOptions{}, func(w *data.TreeWriter) error { return w.Write(smallTree()) }); err != nil {
		t.Fatal(err)
	}
	r, err := data.OpenTree(path, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Next() {
		t.Fatal(r.Err())
	}
	row := *r.Raw()
	for _, s := range []*[]int32{&row.Emitted, &row.NodeParent, &row.NodeToken, &row.NodeQ, &row.NodeP, &row.Path} {
		*s = slices.Clone(*s)
	}
	row.Q, row.P = slices.Clone(row.Q), slices.Clone(row.P)
	return row
}

// TestTreeLogFaults: each fault of a tree step's shape is refused by
// validate-log with one problem naming the row, the step, the field and
// the node; the valid rows around it are checked and pass.
func TestTreeLogFaults(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(r *data.TreeLogRow)
		want  string
	}{
		{"parent after child", func(r *data.TreeLogRow) { r.NodeParent[1] = 3 }, "node_parent: node 1: parent 3 is not an earlier node"},
		{"path leaves the tree", func(r *data.TreeLogRow) { r.Path[1] = 2; r.Emitted[1] = 1 },
			"path: position 1: node 2 is not a child of node 1 (its parent is node 0): the path leaves the tree"},
		{"path names no node", func(r *data.TreeLogRow) { r.Path[0] = 7 }, "path: position 0 names node 7, which is not a drafted node"},
		{"emitted off the path", func(r *data.TreeLogRow) { r.Emitted[1] = 1 }, "emitted_tokens: token 1 at position 1 differs from token 3 of path node 3"},
		{"target row out of range", func(r *data.TreeLogRow) { r.NodeP[2] = 4 }, "node_p: node 2: target row 4 is outside the 4 rows of p"},
		{"draft row out of range", func(r *data.TreeLogRow) { r.NodeQ[1] = 2 }, "node_q: node 1: draft row 2 is outside the 2 rows of q"},
		{"token out of vocabulary", func(r *data.TreeLogRow) { r.NodeToken[3] = 4 }, "node_token: node 3: token 4 is outside the vocabulary [0, 4)"},
		{"siblings share a token", func(r *data.TreeLogRow) { r.NodeToken[2] = 2 }, "node_token: node 2 repeats token 2 of its sibling node 1"},
		{"token not drawable", func(r *data.TreeLogRow) { r.Q[4+3] = 0; r.Q[4+2] = 0.5 }, "node_token: node 3: token 3 has q = 0 in its parent node 1's draft row 1"},
		{"gamma not the depth", func(r *data.TreeLogRow) { r.Gamma = 3 }, "gamma: 3, but the tree's deepest node is at depth 2"},
		{"root with a token", func(r *data.TreeLogRow) { r.NodeToken[0] = 1 }, "node_parent: node 0 has parent -1 and token 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			good := rawSmallTree(t)
			bad := rawSmallTree(t)
			bad.Step = 5
			c.plant(&bad)
			path := writeRawTree(t, []data.TreeLogRow{good, bad, good})
			rep, err := data.Validate(path, 10, 0)
			if !errors.Is(err, data.ErrInvalid) || rep.Valid || rep.Checked != 2 || len(rep.Problems) != 1 {
				t.Fatalf("validate: %v; %+v", err, rep)
			}
			want := `row 1 (run "t", prompt 1, step 5): ` + c.want
			if !strings.HasPrefix(rep.Problems[0], want) {
				t.Errorf("problem %q\nwant prefix %q", rep.Problems[0], want)
			}
		})
	}
}

// readAllTrees reads every step of a tree log held in b.
func readAllTrees(b []byte) (int, error) {
	r, err := data.NewTreeReader(bytes.NewReader(b), int64(len(b)), data.ReadOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for r.Next() {
		n++
	}
	return n, r.Err()
}

// TestTreeLogCorrupt: a truncated tree log is an error wrapping ErrCorrupt
// or ErrInvalid, and a byte flipped anywhere inside gives an error or a
// clean read, never a panic.
func TestTreeLogCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.parquet")
	err := data.WriteTreeLog(path, data.WriterOptions{RowGroupBytes: 300}, func(w *data.TreeWriter) error {
		for range 12 {
			if err := w.Write(smallTree()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	if n, err := readAllTrees(good); err != nil || n != 12 {
		t.Fatalf("valid tree log: %d rows, %v", n, err)
	}
	for _, cut := range []int{0, 4, 8, 100, len(good) / 3, len(good) / 2, len(good) - 200, len(good) - 9, len(good) - 1} {
		n, err := readAllTrees(good[:cut])
		if err == nil || !errors.Is(err, data.ErrCorrupt) && !errors.Is(err, data.ErrInvalid) {
			t.Errorf("truncated at %d: %d rows, error %v", cut, n, err)
		}
	}
	for off := 4; off < len(good)-8; off += 23 {
		b := bytes.Clone(good)
		b[off] ^= 0x5a
		readAllTrees(b)
	}
}
