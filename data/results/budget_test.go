package results

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/table"
)

// skimThrift accepts what encoding/thrift writes and refuses any declared
// length that does not fit in the bytes that remain, without allocating
// for it (issue 23: parquet-go allocates a footer list of the declared
// length before reading it).
func TestSkimThrift(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Write(&b, []table.Row{{{K: "experiment", V: "x"}, {K: "a", V: 1.5}}}, Meta{KeyKind: "merged"}); err != nil {
		t.Fatal(err)
	}
	file := b.Bytes()
	n := int(binary.LittleEndian.Uint32(file[len(file)-8:]))
	footer := file[len(file)-8-n : len(file)-8]
	if used, err := skimThrift(footer); err != nil || used != n {
		t.Fatalf("skim of a valid footer: %d of %d bytes, %v", used, n, err)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"a list of 2^31-1 structs in 3 bytes", []byte{0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07}},
		{"a binary of 1 GB", []byte{0x18, 0x80, 0x80, 0x80, 0x80, 0x04, 0x00}},
		{"a map of 1e9 entries", []byte{0x1b, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0x88}},
		{"nesting 40 deep", append(bytes.Repeat([]byte{0x1c}, 40), bytes.Repeat([]byte{0}, 41)...)},
		{"an unknown type", []byte{0x1d, 0x00}},
		{"truncated", []byte{0x15}},
	} {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := skimThrift(c.b); !errors.Is(err, errThrift) && !errors.Is(err, errUnexpectedEOF()) {
			t.Errorf("%s: %v", c.name, err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("%s: skimming allocated %d bytes", c.name, d)
		}
	}
}

func errUnexpectedEOF() error { _, err := (&skimmer{}).byte(); return err }

// A table declaring more rows than the budget holds is refused before a
// row is read, by the footer's row count (RLE nulls make ten million rows
// a few hundred KB); under the default budget it reads.
func TestReadRowBudget(t *testing.T) {
	rows := make([]table.Row, 20000)
	for i := range rows {
		rows[i] = table.Row{{K: "experiment", V: "x"}}
	}
	rows[0] = append(rows[0], table.KV{K: "a", V: 1.0}, table.KV{K: "b", V: 2.0})
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := WriteFile(path, rows, Meta{KeyKind: "merged"}); err != nil {
		t.Fatal(err)
	}
	defer SetMemBudget(0)
	SetMemBudget(3 << 20) // above one page (20000 values, 2.4 MiB), below 20000 rows × 3 columns (3.7 MiB)
	if _, err := ReadFile(path); !errors.Is(err, sim.ErrMemBudget) || !strings.Contains(err.Error(), "20000 rows × 3 columns") {
		t.Errorf("over the budget: %v", err)
	}
	SetMemBudget(0)
	if tab, err := ReadFile(path); err != nil || len(tab.Rows) != 20000 {
		t.Errorf("under the budget: %d rows, %v", len(tab.Rows), err)
	}
}

// Cell files name their spec by hash and do not copy it; merging takes it
// from the manifest, also when the shards' directories are gathered under
// one.
func TestCellsReferenceTheSpec(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	spec := `{"experiment":"verify","axes":[{"name":"algo","values":["token","block"]}]}` + strings.Repeat(" ", 4000)
	m := Manifest{Experiment: "verify", SpecHash: "abc123", Spec: spec, Seed: 7, Cells: 2}
	for i, sub := range []string{"shard0", "shard1"} {
		d, err := OpenDir(filepath.Join(root, sub), m, "0/1")
		if err != nil {
			t.Fatal(err)
		}
		algo := []string{"token", "block"}[i]
		c := table.Cell{Key: []table.KV{{K: "algo", V: algo}}}
		if err := d.Save(i, c, []table.Row{{{K: "experiment", V: "verify"}, {K: "algo", V: algo}, {K: "alpha", V: 0.5}}}); err != nil {
			t.Fatal(err)
		}
		cell, err := ReadFile(d.CellPath(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, has := cell.Meta[KeySpec]; has || cell.Meta[KeySpecHash] != "abc123" {
			t.Errorf("cell %d carries the spec (%d bytes of metadata)", i, len(cell.Meta[KeySpec]))
		}
		if st, _ := os.Stat(d.CellPath(i)); st.Size() > 3000 {
			t.Errorf("cell file of %d bytes", st.Size())
		}
	}
	tab, rep, err := Merge(root)
	if err != nil || rep.Cells != 2 {
		t.Fatalf("merge: %v", err)
	}
	if tab.Meta[KeySpec] != spec {
		t.Errorf("the merged table's spec is %.40q, not the manifest's", tab.Meta[KeySpec])
	}
}
