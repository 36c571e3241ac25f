package data

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/specsim/specsim/internal/fsutil"
)

// Step is one speculative step in memory: the header fields of a LogRow,
// the draft and emitted tokens, and the rows as logged (probabilities or
// raw logits, per Kind), Q with γ rows and P with γ+1, each of length V.
type Step struct {
	RunID                   string
	PromptID, Step          int64
	Tokens, Emitted         []int
	TargetModel, DraftModel string
	Sampling                Sampling
	// Kind is KindProbs or KindLogits.
	Kind string
	Q, P [][]float32
}

// Gamma returns γ = len(Tokens).
func (s *Step) Gamma() int { return len(s.Tokens) }

// WriterOptions configures a Writer.
type WriterOptions struct {
	// Sparse > 0 stores each row's Sparse largest entries (plus every
	// token the step drafts or emits at that position, so the ratio
	// p_i(x_i)/q_i(x_i) is stored exactly) and the tail mass; 0 stores
	// rows dense. Only probability rows can be stored sparse.
	Sparse int
	// RowGroupBytes is the target size of a row group in decoded bytes
	// (default 16 MiB); readers hold about one row group's pages at a time.
	RowGroupBytes int
	// Provenance goes into the file's key/value metadata.
	Provenance Provenance
	// MemBudget is the budget a step's rows are checked against as a
	// reader will check them (0: sim.DefaultMemBudget), so a log is not
	// written that the reader would refuse.
	MemBudget int64
}

// Writer writes a log, one LogRow per Write. The parquet writer is made
// on the first Write, when the row size (γ, V) is known, so row groups hold
// about RowGroupBytes each.
type Writer struct {
	out io.Writer
	buf *bufio.Writer
	opt WriterOptions
	pw  *parquet.GenericWriter[LogRow]
	row [1]LogRow
	v   int
	n   int64
}

// WriteLog writes a log to path atomically (internal/fsutil.WriteFile):
// fill writes its steps to a Writer on a temporary file in path's
// directory, which is closed, synced and renamed over path only if fill
// returns nil. An error, a cancelled context inside fill, SIGKILL or a
// full disk leave the previous file at path (or none), never a truncated
// log that would still read as valid.
func WriteLog(path string, opt WriterOptions, fill func(w *Writer) error) error {
	return fsutil.WriteFile(path, func(out io.Writer) error {
		w := NewWriter(out, opt)
		if err := fill(w); err != nil {
			return err
		}
		return w.Close()
	})
}

// NewWriter returns a Writer to out; Close flushes but does not close out.
func NewWriter(out io.Writer, opt WriterOptions) *Writer {
	if opt.RowGroupBytes <= 0 {
		opt.RowGroupBytes = 16 << 20
	}
	w := &Writer{opt: opt}
	w.buf = bufio.NewWriterSize(out, 1<<20)
	w.out = w.buf
	return w
}

// Rows returns the number of rows written.
func (w *Writer) Rows() int64 { return w.n }

// Write validates s and appends it as one row. Every step of a file must
// have the same vocabulary size.
func (w *Writer) Write(s *Step) error {
	r := &w.row[0]
	if err := w.fill(r, s); err != nil {
		return err
	}
	if err := checkRow(r, w.n, w.v, w.opt.MemBudget); err != nil {
		return err
	}
	if err := w.open(r); err != nil {
		return err
	}
	if _, err := w.pw.Write(w.row[:]); err != nil {
		return err
	}
	w.n++
	return nil
}

// WriteRow validates a LogRow (as decoded from another writer, e.g. the
// Python logger's JSON lines) and appends it.
func (w *Writer) WriteRow(r *LogRow) error {
	if err := checkRow(r, w.n, w.v, w.opt.MemBudget); err != nil {
		return err
	}
	if err := w.open(r); err != nil {
		return err
	}
	w.row[0] = *r
	if _, err := w.pw.Write(w.row[:]); err != nil {
		return err
	}
	w.n++
	return nil
}

// open makes the parquet writer on the first row.
func (w *Writer) open(r *LogRow) error {
	if w.pw != nil {
		return nil
	}
	w.v = int(r.VocabSize)
	g := int(r.Gamma)
	per := 4 * (2*g + 1) * w.v
	if r.Layout == LayoutSparse {
		per = 8 * max(1, len(r.QIndex)+len(r.PIndex))
	}
	rows := max(1, int64(w.opt.RowGroupBytes/per))
	opts := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(rows), parquet.Compression(&snappy.Codec{}),
		parquet.CreatedBy("specsim", "data", "schema 1")}
	for _, kv := range w.opt.Provenance.pairs() {
		opts = append(opts, parquet.KeyValueMetadata(kv[0], kv[1]))
	}
	w.pw = parquet.NewGenericWriter[LogRow](w.out, opts...)
	return nil
}

// fill converts a Step to a LogRow, reusing r's slices.
func (w *Writer) fill(r *LogRow, s *Step) error {
	g := len(s.Tokens)
	if g < 1 || len(s.Q) != g || len(s.P) != g+1 {
		return fmt.Errorf("data: step %d has %d draft tokens, %d q rows and %d p rows; need γ ≥ 1 tokens, γ q rows and γ+1 p rows", s.Step, g, len(s.Q), len(s.P))
	}
	v := len(s.P[0])
	*r = LogRow{SchemaVersion: SchemaVersion, RunID: s.RunID, PromptID: s.PromptID, Step: s.Step,
		Gamma: int32(g), VocabSize: int32(v), TargetModel: s.TargetModel, DraftModel: s.DraftModel,
		Temperature: s.Sampling.Temperature, TopK: int32(s.Sampling.TopK), TopP: s.Sampling.TopP, MinP: s.Sampling.MinP,
		RowKind: s.Kind, Layout: LayoutDense,
		DraftTokens: appendInt32(r.DraftTokens[:0], s.Tokens), Emitted: appendInt32(r.Emitted[:0], s.Emitted),
		Q: r.Q[:0], P: r.P[:0], QNNZ: r.QNNZ[:0], QIndex: r.QIndex[:0], QValue: r.QValue[:0], QTail: r.QTail[:0],
		PNNZ: r.PNNZ[:0], PIndex: r.PIndex[:0], PValue: r.PValue[:0], PTail: r.PTail[:0]}
	for _, row := range append(slices.Clip(s.Q), s.P...) {
		if len(row) != v {
			return fmt.Errorf("data: step %d: rows have different lengths (%d and %d); every row must have V entries", s.Step, len(row), v)
		}
	}
	if w.opt.Sparse <= 0 {
		for _, row := range s.Q {
			r.Q = append(r.Q, row...)
		}
		for _, row := range s.P {
			r.P = append(r.P, row...)
		}
		return nil
	}
	if s.Kind != KindProbs {
		return fmt.Errorf("data: sparse storage holds probabilities only; step %d has row_kind %q (write dense, or store processed probabilities)", s.Step, s.Kind)
	}
	r.Layout = LayoutSparse
	for i, row := range s.Q {
		keep := []int{s.Tokens[i]}
		var nnz int32
		var tail float32
		r.QIndex, r.QValue, nnz, tail = sparseRow(r.QIndex, r.QValue, row, w.opt.Sparse, keep)
		r.QNNZ = append(r.QNNZ, nnz)
		r.QTail = append(r.QTail, tail)
	}
	for i, row := range s.P {
		var keep []int
		if i < g {
			keep = append(keep, s.Tokens[i])
		}
		if i < len(s.Emitted) {
			keep = append(keep, s.Emitted[i])
		}
		var nnz int32
		var tail float32
		r.PIndex, r.PValue, nnz, tail = sparseRow(r.PIndex, r.PValue, row, w.opt.Sparse, keep)
		r.PNNZ = append(r.PNNZ, nnz)
		r.PTail = append(r.PTail, tail)
	}
	return nil
}

// sparseRow appends the k largest entries of row (ties by index) and the
// tokens in keep, in index order, and returns the tail mass 1 - Σ kept.
func sparseRow(idx []int32, val []float32, row []float32, k int, keep []int) ([]int32, []float32, int32, float32) {
	order := make([]int, len(row))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(row[b], row[a]) }) // descending
	sel := order[:min(k, len(order))]
	for _, x := range keep {
		if x >= 0 && x < len(row) && !slices.Contains(sel, x) {
			sel = append(slices.Clip(sel), x)
		}
	}
	sel = slices.Clone(sel)
	slices.Sort(sel)
	kept := 0.0
	for _, x := range sel {
		idx = append(idx, int32(x))
		val = append(val, row[x])
		kept += float64(row[x])
	}
	tail := 1 - kept
	if tail < 0 || len(sel) == len(row) {
		tail = 0
	}
	return idx, val, int32(len(sel)), float32(tail)
}

func appendInt32(dst []int32, src []int) []int32 {
	for _, x := range src {
		dst = append(dst, int32(x))
	}
	return dst
}

// Close finishes the file (footer and metadata) and, for Create, closes it.
// A log with no rows is still a valid parquet file with the schema.
func (w *Writer) Close() error {
	if w.pw == nil {
		opts := []parquet.WriterOption{parquet.CreatedBy("specsim", "data", "schema 1")}
		for _, kv := range w.opt.Provenance.pairs() {
			opts = append(opts, parquet.KeyValueMetadata(kv[0], kv[1]))
		}
		w.pw = parquet.NewGenericWriter[LogRow](w.out, opts...)
	}
	err := w.pw.Close()
	if ferr := w.buf.Flush(); err == nil {
		err = ferr
	}
	return err
}
