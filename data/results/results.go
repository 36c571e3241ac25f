package results

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/internal/gitrev"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/table"
)

// Metadata keys of a results file. Values are strings.
const (
	// KeyFormat is the format version, FormatVersion.
	KeyFormat = "specsim.format"
	// KeyKind is "cell" for one cell's rows, "merged" for a merged table.
	KeyKind = "specsim.kind"
	// KeyExperiment is the experiment name (the name in CellSeed).
	KeyExperiment = "specsim.experiment"
	// KeySpecHash is the hex SHA-256 of the canonical spec.
	KeySpecHash = "specsim.spec_hash"
	// KeySpec is the canonical spec (JSON) the rows come from.
	KeySpec = "specsim.spec"
	// KeySeed is the master seed, decimal.
	KeySeed = "specsim.seed"
	// KeyCells is the number of cells of the whole sweep, decimal.
	KeyCells = "specsim.cells"
	// KeyCellIndex and KeyCellID identify the cell of a "cell" file.
	KeyCellIndex = "specsim.cell_index"
	// KeyCellID is the cell's identity, Cell.ID().
	KeyCellID = "specsim.cell_id"
	// KeyShard is "i/n", the shard that computed the file ("" if merged).
	KeyShard = "specsim.shard"
	// KeyGitRevision is the VCS revision the binary was built from
	// (suffixed "+dirty" when modified), or "unknown".
	KeyGitRevision = "specsim.git_revision"
	// KeyGoVersion is the Go version of the binary.
	KeyGoVersion = "specsim.go_version"
	// KeyColumns is the JSON list of {"name","type"} in table order.
	KeyColumns = "specsim.columns"
)

// FormatVersion is the value of KeyFormat written by this package.
const FormatVersion = "1"

// Column types.
const (
	Double = "double"
	Int64  = "int64"
	String = "string"
	Bool   = "bool"
)

// Column is one typed column of a table.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Meta is a file's key/value metadata.
type Meta map[string]string

// Table is a results table read from or written to a file.
type Table struct {
	Columns []Column
	Rows    []table.Row
	Meta    Meta
}

// Provenance returns the git revision and Go version of the running
// binary (internal/gitrev): the revision stamped by the toolchain
// ("+dirty" when modified), else, where none was stamped (go run, go test,
// a git worktree), that of the working directory's checkout from git, else
// "unknown".
func Provenance() (revision, goVersion string) {
	return gitrev.Revision(), gitrev.Current().GoVersion
}

func typeOf(v any) (string, error) {
	switch v.(type) {
	case float64:
		return Double, nil
	case int64, int:
		return Int64, nil
	case string:
		return String, nil
	case bool:
		return Bool, nil
	}
	return "", fmt.Errorf("value %v of type %T; use float64, int64, string or bool", v, v)
}

// Columns returns the union of the rows' columns in order of first
// appearance, typed by their values; a column holding two types is an
// error naming it.
func Columns(rows []table.Row) ([]Column, error) {
	var cols []Column
	idx := map[string]int{}
	for ri, r := range rows {
		seen := map[string]bool{}
		for _, kv := range r {
			if seen[kv.K] {
				return nil, fmt.Errorf("row %d: column %q appears twice", ri, kv.K)
			}
			seen[kv.K] = true
			t, err := typeOf(kv.V)
			if err != nil {
				return nil, fmt.Errorf("row %d, column %q: %w", ri, kv.K, err)
			}
			if i, ok := idx[kv.K]; ok {
				if cols[i].Type != t {
					return nil, fmt.Errorf("column %q holds both %s and %s values (row %d)", kv.K, cols[i].Type, t, ri)
				}
				continue
			}
			idx[kv.K] = len(cols)
			cols = append(cols, Column{kv.K, t})
		}
	}
	return cols, nil
}

func leaf(t string) parquet.Node {
	switch t {
	case Double:
		return parquet.Leaf(parquet.DoubleType)
	case Int64:
		return parquet.Int(64)
	case String:
		return parquet.String()
	default:
		return parquet.Leaf(parquet.BooleanType)
	}
}

// emptyColumn is the placeholder column of a table without columns
// (Parquet needs at least one leaf); it is dropped on reading.
const emptyColumn = "_specsim_empty"

// Write writes rows as a Parquet file to w with meta (plus KeyFormat and
// KeyColumns) as key/value metadata.
func Write(w io.Writer, rows []table.Row, meta Meta) error {
	cols, err := Columns(rows)
	if err != nil {
		return err
	}
	schemaCols := cols
	if len(cols) == 0 {
		schemaCols = []Column{{emptyColumn, Bool}}
	}
	g := parquet.Group{}
	for _, c := range schemaCols {
		g[c.Name] = parquet.Optional(leaf(c.Type))
	}
	schema := parquet.NewSchema("specsim", g)
	colJSON, _ := json.Marshal(cols)
	opts := []parquet.WriterOption{schema,
		parquet.KeyValueMetadata(KeyFormat, FormatVersion),
		parquet.KeyValueMetadata(KeyColumns, string(colJSON))}
	for _, k := range sortedKeys(meta) {
		if k == KeyFormat || k == KeyColumns {
			continue
		}
		opts = append(opts, parquet.KeyValueMetadata(k, meta[k]))
	}
	// Leaf index of every column: Parquet orders a group's fields by name.
	leafIdx := map[string]int{}
	for _, c := range schemaCols {
		lc, ok := schema.Lookup(c.Name)
		if !ok {
			return fmt.Errorf("results: column %q missing from the schema", c.Name)
		}
		leafIdx[c.Name] = lc.ColumnIndex
	}
	pw := parquet.NewWriter(w, opts...)
	buf := make([]parquet.Row, 0, len(rows))
	for _, r := range rows {
		vals := make(parquet.Row, len(schemaCols))
		for _, c := range schemaCols {
			vals[leafIdx[c.Name]] = parquet.NullValue().Level(0, 0, leafIdx[c.Name])
		}
		for _, kv := range r {
			var v parquet.Value
			switch x := kv.V.(type) {
			case float64:
				v = parquet.DoubleValue(x)
			case int64:
				v = parquet.Int64Value(x)
			case int:
				v = parquet.Int64Value(int64(x))
			case string:
				v = parquet.ByteArrayValue([]byte(x))
			case bool:
				v = parquet.BooleanValue(x)
			}
			i := leafIdx[kv.K]
			vals[i] = v.Level(0, 1, i)
		}
		buf = append(buf, vals)
	}
	if len(buf) > 0 {
		if _, err := pw.WriteRows(buf); err != nil {
			return fmt.Errorf("results: writing rows: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("results: closing the parquet writer: %w", err)
	}
	return nil
}

func sortedKeys(m Meta) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// WriteFile writes rows to path atomically: a temporary file in path's
// directory (named .<base>.tmp-*, which readers ignore), synced, then
// renamed over path.
func WriteFile(path string, rows []table.Row, meta Meta) error {
	var b bytes.Buffer
	if err := Write(&b, rows, meta); err != nil {
		return err
	}
	return AtomicWrite(path, b.Bytes())
}

// AtomicWrite writes data to path through a synced temporary file in the
// same directory and a rename (internal/fsutil.WriteFile).
func AtomicWrite(path string, data []byte) error {
	return fsutil.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// IsTemp reports whether a file name is a temporary file of AtomicWrite.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// Read reads a table written by Write. A file parquet-go cannot decode
// (see Guard) is an error that says to delete and recompute it. Before
// anything is decoded the frame and footer are checked (CheckFrame), every
// page against the memory budget (CheckPages, MemBudget), and the declared
// rows × columns against it too; an error over the budget wraps
// sim.ErrMemBudget.
func Read(r io.ReaderAt, size int64) (Table, error) {
	if err := CheckFrame(r, size); err != nil {
		return Table{}, err
	}
	var pf *parquet.File
	var err error
	if perr := Guard(func() { pf, err = parquet.OpenFile(r, size) }); perr != nil {
		return Table{}, damaged(perr)
	}
	if err != nil {
		return Table{}, fmt.Errorf("not a readable parquet file: %w", err)
	}
	t, err := tableHeader(pf)
	if err != nil {
		return Table{}, err
	}
	budget := MemBudget()
	if err := CheckPages(r, size, pf.Metadata(), budget); err != nil {
		return Table{}, err
	}
	var rd *parquet.Reader
	if perr := Guard(func() { rd = parquet.NewReader(pf) }); perr != nil {
		return Table{}, damaged(perr)
	}
	defer rd.Close()
	n := rd.NumRows()
	// every row becomes a table.Row of its columns: refuse a table that
	// declares more than the budget holds before reading a row (a few
	// hundred bytes of RLE nulls can declare ten million rows)
	if err := sim.CheckMem(fmt.Sprintf("a results table of %d rows × %d columns", n, len(t.Columns)),
		sim.MulBytes(n, int64(len(t.Columns)+1), CellCost), budget, "it is damaged or not a table of this program"); err != nil {
		return Table{}, err
	}
	if t.Rows, err = readRows(rd, pf, t.Columns, n); err != nil {
		return Table{}, err
	}
	if t.Meta[KeyKind] == "cell" {
		if err := CheckCellKeys(t); err != nil {
			return Table{}, err
		}
	}
	return t, nil
}

// damaged is the error of a file whose decoding panicked (Guard's perr).
func damaged(perr error) error {
	return fmt.Errorf("not a readable parquet file (damaged: %v); delete it and recompute", perr.(*DecoderPanic).Value)
}

// tableHeader is the table of pf with its metadata and columns (no rows),
// refusing a file of another format or whose listed columns are missing
// from its schema.
func tableHeader(pf *parquet.File) (Table, error) {
	t := Table{Meta: Meta{}}
	for _, kv := range pf.Metadata().KeyValueMetadata {
		t.Meta[kv.Key] = kv.Value
	}
	if t.Meta[KeyFormat] != FormatVersion {
		return Table{}, fmt.Errorf("metadata %s = %q; not a specsim results file of format %s", KeyFormat, t.Meta[KeyFormat], FormatVersion)
	}
	if err := json.Unmarshal([]byte(t.Meta[KeyColumns]), &t.Columns); err != nil {
		return Table{}, fmt.Errorf("metadata %s: %w", KeyColumns, err)
	}
	for _, c := range t.Columns {
		if _, ok := pf.Schema().Lookup(c.Name); !ok {
			return Table{}, fmt.Errorf("column %q listed in %s is missing from the schema", c.Name, KeyColumns)
		}
	}
	return t, nil
}

// readRows reads the n rows of rd (over pf, whose columns are cols), each
// with its non-null values in cols' order.
func readRows(rd *parquet.Reader, pf *parquet.File, cols []Column, n int64) ([]table.Row, error) {
	byLeaf := map[int]Column{}
	order := map[string]int{}
	for i, c := range cols {
		lc, _ := pf.Schema().Lookup(c.Name)
		byLeaf[lc.ColumnIndex] = c
		order[c.Name] = i
	}
	var rows []table.Row
	buf := make([]parquet.Row, 64)
	for int64(len(rows)) < n {
		var k int
		var err error
		if perr := Guard(func() { k, err = rd.ReadRows(buf) }); perr != nil {
			return nil, damaged(perr)
		}
		for _, pr := range buf[:k] {
			row, derr := decodeRow(pr, len(cols), byLeaf, order)
			if derr != nil {
				return nil, derr
			}
			rows = append(rows, row)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading rows: %w", err)
		}
		if k == 0 {
			break
		}
	}
	if int64(len(rows)) != n {
		return nil, fmt.Errorf("read %d rows of %d", len(rows), n)
	}
	return rows, nil
}

// decodeRow is the table row of the parquet row pr: its non-null values
// of the columns byLeaf maps (by leaf index), in the order order gives
// (ncols columns in all).
func decodeRow(pr parquet.Row, ncols int, byLeaf map[int]Column, order map[string]int) (table.Row, error) {
	row := make(table.Row, ncols)
	present := make([]bool, ncols)
	for _, v := range pr {
		c, ok := byLeaf[v.Column()]
		if !ok || v.IsNull() {
			continue
		}
		var x any
		switch c.Type {
		case Double:
			x = v.Double()
		case Int64:
			x = v.Int64()
		case String:
			x = string(v.ByteArray())
		case Bool:
			x = v.Boolean()
		default:
			return nil, fmt.Errorf("column %q has unknown type %q", c.Name, c.Type)
		}
		i := order[c.Name]
		row[i] = table.KV{K: c.Name, V: x}
		present[i] = true
	}
	out := row[:0]
	for i, kv := range row {
		if present[i] {
			out = append(out, kv)
		}
	}
	return out, nil
}

// CheckCellKeys checks that every row of a cell file carries its cell's
// key: rows are written as experiment, then the cell's key columns in
// order, then the metrics (experiments.Prefix), so the columns after the
// first must begin with key columns whose rendering k1=v1,k2=v2 is the
// file's cell id (metadata specsim.cell_id). A damaged value (a bit flip
// that turns the algo key to NULL, say) or a row of another cell fails
// with an error naming the row, instead of being merged or exported as if
// it belonged to the cell.
func CheckCellKeys(t Table) error {
	id := t.Meta[KeyCellID]
	for i, r := range t.Rows {
		if !rowHasKey(r, id) {
			return fmt.Errorf("row %d does not carry its cell's key %s = %q (damaged, or a row of another cell); delete the file and recompute the cell", i, KeyCellID, id)
		}
	}
	return nil
}

// rowHasKey reports whether some prefix r[1:1+n] renders as id.
func rowHasKey(r table.Row, id string) bool {
	if id == "" {
		return true
	}
	if len(r) == 0 {
		return false
	}
	var b strings.Builder
	for j, kv := range r[1:] {
		if j > 0 {
			b.WriteByte(',')
		}
		if kv.V == nil {
			return false
		}
		fmt.Fprintf(&b, "%s=%v", kv.K, kv.V)
		s := b.String()
		if s == id {
			return true
		}
		if len(s) >= len(id) || !strings.HasPrefix(id, s) {
			return false
		}
	}
	return false
}

// CheckFrame validates a Parquet file's frame before parquet-go sees it:
// the magic "PAR1" at both ends, a footer length that fits in the file
// (a damaged length makes parquet-go allocate gigabytes before failing),
// and footer metadata whose every declared length fits in the footer
// (skimThrift: parquet-go allocates a list of the declared length before
// reading it).
func CheckFrame(r io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 12 {
		return fmt.Errorf("not a readable parquet file: %d bytes, shorter than the smallest Parquet file (12)", size)
	}
	head, tail := make([]byte, 4), make([]byte, 8)
	if _, err := r.ReadAt(head, 0); err != nil {
		return fmt.Errorf("not a readable parquet file: %w", err)
	}
	if _, err := r.ReadAt(tail, size-8); err != nil {
		return fmt.Errorf("not a readable parquet file: %w", err)
	}
	if string(head) != magic || string(tail[4:]) != magic {
		return fmt.Errorf("not a readable parquet file: no PAR1 magic at both ends (truncated or not Parquet)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return fmt.Errorf("not a readable parquet file: footer length %d exceeds the file's %d bytes (damaged or truncated)", n, size)
	}
	return checkFooter(r, size, n)
}

// CellCost is the memory one value of a results table takes once read (a
// table.KV with its boxed value, and its share of the row), with a
// margin; Read checks rows × columns × CellCost against the budget before
// it reads a row.
const CellCost = 64

// memBudget is the budget of MemBudget; 0 stands for
// sim.DefaultMemBudget.
var memBudget atomic.Int64

// SetMemBudget sets the memory budget, in bytes, that reading one results
// table may take (0: sim.DefaultMemBudget): the front ends set it once
// from their --mem-budget flag before they run a command. Tables are read
// in many places (merging, the store's resume, reports, export), so the
// budget is the process's, not an argument of each.
func SetMemBudget(bytes int64) { memBudget.Store(bytes) }

// MemBudget returns the budget SetMemBudget set, or sim.DefaultMemBudget.
func MemBudget() int64 {
	if b := memBudget.Load(); b > 0 {
		return b
	}
	return sim.DefaultMemBudget
}

// ReadFile reads the table at path; errors name the file.
func ReadFile(path string) (Table, error) {
	f, err := fsutil.Open(path)
	if err != nil {
		return Table{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Table{}, err
	}
	t, err := Read(f, st.Size())
	if err != nil {
		return Table{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Equal reports whether two values are identical, floats bit for bit (so
// NaN equals NaN and 0 differs from -0).
func Equal(a, b any) bool {
	x, ok1 := a.(float64)
	y, ok2 := b.(float64)
	if ok1 && ok2 {
		return math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}
