package results

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/table"
)

// A table with every type, special floats and missing columns reads back
// identical, bit for bit, with its metadata.
func TestRoundTrip(t *testing.T) {
	negZero := math.Copysign(0, -1)
	rows := []table.Row{
		{kv("name", "a"), kv("k", int64(3)), kv("x", 0.1), kv("ok", true)},
		{kv("name", "b"), kv("k", int64(-7)), kv("x", math.NaN()), kv("extra", math.Inf(-1))},
		{kv("name", ""), kv("x", negZero), kv("ok", false)},
		{kv("zeta", math.Nextafter(1, 2))},
	}
	var b bytes.Buffer
	meta := Meta{KeySeed: "42", KeySpecHash: "abc"}
	if err := Write(&b, rows, meta); err != nil {
		t.Fatal(err)
	}
	tab, err := Read(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if err := SameRows(rows, tab.Rows); err != nil {
		t.Fatalf("round trip: %v\n%v", err, tab.Rows)
	}
	if tab.Meta[KeySeed] != "42" || tab.Meta[KeySpecHash] != "abc" || tab.Meta[KeyFormat] != FormatVersion {
		t.Fatalf("metadata %v", tab.Meta)
	}
	want := []Column{{"name", String}, {"k", Int64}, {"x", Double}, {"ok", Bool}, {"extra", Double}, {"zeta", Double}}
	if len(tab.Columns) != len(want) {
		t.Fatalf("columns %v", tab.Columns)
	}
	for i := range want {
		if tab.Columns[i] != want[i] {
			t.Fatalf("column %d = %v, want %v", i, tab.Columns[i], want[i])
		}
	}
	// Writing is deterministic.
	var b2 bytes.Buffer
	Write(&b2, tab.Rows, tab.Meta)
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Error("rewriting the table read back changed its bytes")
	}
}

func TestEmptyAndErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.parquet")
	if err := WriteFile(path, nil, Meta{KeyKind: "cell"}); err != nil {
		t.Fatal(err)
	}
	tab, err := ReadFile(path)
	if err != nil || len(tab.Rows) != 0 || len(tab.Columns) != 0 {
		t.Fatalf("empty table: %v %v", tab, err)
	}
	err = Write(&bytes.Buffer{}, []table.Row{{kv("x", 1.0)}, {kv("x", "one")}}, nil)
	if err == nil || !strings.Contains(err.Error(), `column "x" holds both double and string`) {
		t.Errorf("type conflict: %v", err)
	}
	err = Write(&bytes.Buffer{}, []table.Row{{kv("x", float32(1))}}, nil)
	if err == nil || !strings.Contains(err.Error(), `column "x"`) {
		t.Errorf("float32: %v", err)
	}
	os.WriteFile(path, []byte("PAR1 garbage"), 0o644)
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("garbage: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if IsTemp(e.Name()) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func kv(k string, v any) table.KV { return table.KV{K: k, V: v} }

// Read returns an error, never panics, on a damaged file: every byte of a
// small table's file set to 0x00 and to 0xff in turn, and every
// truncation. (Read has no recover; this is what shows it needs none on
// these inputs.)
func TestReadDamaged(t *testing.T) {
	rows := []table.Row{{kv("s", "ab"), kv("k", int64(3)), kv("x", 0.5), kv("ok", true)}, {kv("s", "c"), kv("x", math.NaN())}}
	var b bytes.Buffer
	if err := Write(&b, rows, Meta{KeySeed: "1"}); err != nil {
		t.Fatal(err)
	}
	good := b.Bytes()
	buf := make([]byte, len(good))
	for i := range good {
		for _, v := range []byte{0x00, 0xff} {
			copy(buf, good)
			buf[i] = v
			_, _ = Read(bytes.NewReader(buf), int64(len(buf)))
		}
		_, _ = Read(bytes.NewReader(good[:i]), int64(i))
	}
}

// TestCellKeysChecked (issue 12): a cell file whose row lost its algo key
// (a bit flip that makes it NULL) or carries another cell's key is refused
// by ReadFile, so export, merge and resume all reject it.
func TestCellKeysChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	meta := Meta{KeyKind: "cell", KeyCellID: "algo=token,V=4"}
	good := table.Row{{K: "experiment", V: "verify"}, {K: "algo", V: "token"}, {K: "V", V: int64(4)}, {K: "alpha", V: 0.5}}
	path := filepath.Join(dir, "cell.parquet")
	if err := WriteFile(path, []table.Row{good}, meta); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Fatalf("a good cell: %v", err)
	}
	for name, r := range map[string]table.Row{
		"algo NULL (read back as missing)": {{K: "experiment", V: "verify"}, {K: "V", V: int64(4)}, {K: "alpha", V: 0.5}},
		"another cell":                     {{K: "experiment", V: "verify"}, {K: "algo", V: "block"}, {K: "V", V: int64(4)}, {K: "alpha", V: 0.5}},
		"another V":                        {{K: "experiment", V: "verify"}, {K: "algo", V: "token"}, {K: "V", V: int64(5)}, {K: "alpha", V: 0.5}},
	} {
		p := filepath.Join(dir, "bad.parquet")
		if err := WriteFile(p, []table.Row{good, r}, meta); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "row 1 does not carry its cell's key") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
